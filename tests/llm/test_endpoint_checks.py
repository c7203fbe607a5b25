"""The checks every endpoint profile shares (lcrag.llm.keyscan.EndpointChecks): reader, embedding and rerank
profiles refuse credentials or a key in ``base_url`` and a pasted key as ``api_key_env``, with the same messages."""

import pytest
from pydantic import ValidationError

from lcrag.embeddings.endpoint import EmbedderProfile
from lcrag.llm.profiles import ReaderProfile
from lcrag.retrieval.rerank_endpoint import RerankerProfile

KEY = "sk-" + "abcdefghijklmnopqrstuvwx" + "0123456789"
PROFILES = [(ReaderProfile, dict(name="r", model="m")), (EmbedderProfile, dict(name="e", model="m")),
            (RerankerProfile, dict(name="k", model="m"))]
BAD = [(dict(base_url="http://user:pw@host/v1"), "base_url", "must not contain credentials"),
       (dict(base_url=f"http://host/v1?api_key={KEY}"), "base_url", "carries a credential"),
       (dict(base_url="http://host/v1", api_key_env=KEY), "api_key_env", "not the key itself")]


@pytest.mark.parametrize("cls,kw", PROFILES, ids=lambda x: getattr(x, "__name__", ""))
@pytest.mark.parametrize("bad,field,says", BAD, ids=["credentials", "key-in-query", "key-as-env-name"])
def test_every_endpoint_profile_refuses_keys_where_they_would_be_written(cls, kw, bad, field, says):
    with pytest.raises(ValidationError) as e:
        cls(**kw, **bad)
    err = e.value.errors()[0]
    assert err["loc"] == (field,) and says in err["msg"]


@pytest.mark.parametrize("cls,kw", PROFILES, ids=lambda x: getattr(x, "__name__", ""))
def test_a_plain_loopback_url_and_a_variable_name_pass(cls, kw):
    p = cls(**kw, base_url="http://127.0.0.1:8000/v1", api_key_env="MY_KEY")
    assert p.base_url == "http://127.0.0.1:8000/v1" and p.api_key_env == "MY_KEY"
