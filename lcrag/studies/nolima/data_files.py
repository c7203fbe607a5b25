"""The data files the NoLiMa study reads: origin, licence, size, sha256 and where lcrag looks for each
(:mod:`lcrag.data.registry`; ``lcrag data list --dataset nolima``). Hashes: recorded from the copies in the
shared data directory (commits in its ``SOURCE.md`` files)."""

from __future__ import annotations

from ...data.registry import DataFile, describe, register

describe("nolima", "NoLiMa needles (LC-EBG subset) and rand_book_1 haystacks; Adobe Research License")
_LCEBG = "https://github.com/debobanerjee/LC-EBG @0a15931 (copy in the shared data dir)"
_NOLIMA_LIC = "Adobe Research License (non-commercial research only; lc-ebg/LICENSE-NoLiMa-AdobeResearch.md)"
for _name, _size, _sha in (
    ("needle_set", 14736, "be6e661c927107461a4c5ff8ee324178bb84ad876ad62ba9ce1c2ab0f8ca31cf"),
    ("two_needle_set", 2024, "a0075e7046d0f51e21a826c4ba419d1a414064c75b50083cfe8db3eefb98f5fb"),
    ("contradictory_two_needle_set", 2536, "a137e7d095e6396783654bae94f20c114189b760cf42c3609efb521cdf660a76"),
):
    register(DataFile(f"nolima/{_name}", f"{_name}.json", _size, _sha, _LCEBG, _NOLIMA_LIC,
                      (f"lc-ebg/datasets/NoLiMa/needlesets/{_name}.json",)))
for _n, _size, _sha in (
    (10000, 10232, "1b50eb1be28b541ab32bc0719a212edad02be7360a39f2310bf2bbe2b472b930"),
    (20000, 20482, "6aca15b6e96e580b8cc5646c0cdb98e99fb7928cc45e10800240da60a11e0731"),
    (30000, 30547, "076d54a85553b2dc95381d214c512a5e4416e559a702222a6a53140242b174d8"),
    (40000, 40727, "0014f1c4f818a71fa541239a42835d5ef790dccef0260e18ac987a685cc71bc4"),
    (50000, 51029, "1b174487cefd0dbbeec7df9d0896edbd7c9c1a166104b0a6efb382a578553fb6"),
    (60000, 61106, "5e8d88b2b03c0b6a9347d6ebe6c5acd4eb236d52ed5bef63bb52a43acccc0706"),
    (70000, 71234, "0e7af31f9486281a0b9905d174b87676f752260b2920f44f4cab966be1ae8e2e"),
    (80000, 81610, "7cb08b387a1c7b4ce6307d911bc3d9a040f115c62a4b48076454ea9285f7c6be"),
    (90000, 91452, "8e05b5b96d8440586393e42c89d35bc2b356fff5f6cbe239dd7c7297c873b364"),
    (100000, 102092, "8fbc53ff50bcf2559979fd46673d5224776e8b4de1f93fb69308749e86f6f170"),
    (200000, 203891, "a86510d3133b5f5e2069cf1b6897b988d814db6d97a2f587d794389bfc1f3bc9"),
    (300000, 305537, "4b297770fe79d6d7c250536b67b70cfbb9f0af0011dadb2e8c745a2e6bdfa1f9"),
    (400000, 407841, "db01e0394becaa18279cc7420965edbbe15701c799bedd60de8dc8e71c7a5ce4"),
    (500000, 508995, "82f9d50fe3904fe0071d19aa19703cc160db8f02618360bdae0f181a80cca99d"),
    (600000, 611876, "04d9d1d8d56fe7f77361d7ae06f6859e1870e894de839234285bd161dfe7266d"),
    (700000, 713277, "ada66838865cdd23e56d77bea47a0b38b2d9aff2b34d6d195ebb6c68cf258c35"),
    (800000, 817114, "b2ccf0a37acae5cc6a5f80a0031455dd5fa90f89e1f8a488823d9fa03b4048a3"),
    (900000, 917027, "1c880bb8fad9d9449c121213b1562229346489b31d1051225cfe88f35b02f56c"),
    (1000000, 1018003, "de8db0b9980806bf588dd8c582763b7cae0c7276f32f1da2f0752e2f79dc4dfd"),
):
    _f = f"rand_shuffle_{_n}__rand_book_1.txt"
    register(DataFile(f"nolima/haystack_{_n}", _f, _size, _sha,
                      _LCEBG + "; reconstructed from NeedleRanking hit lists (data README §2.2). Other books and "
                      "lengths: HuggingFace amodaresi/NoLiMa", _NOLIMA_LIC,
                      (f"lc-ebg/derived/nolima_rand_book_1_haystacks/{_f}",)))
