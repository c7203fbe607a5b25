"""lcrag.resources.weights.quiet_loading: transformers' weight-loading progress bar is off inside the block only, and
the caller's setting is restored (on or off) even when loading fails."""

import pytest

from lcrag.resources.weights import quiet_loading


def test_quiet_loading_switches_the_bar_off_inside_and_restores_the_callers_setting():
    from transformers.utils import logging as hf_logging

    hf_logging.enable_progress_bar()
    try:
        with quiet_loading():
            assert not hf_logging.is_progress_bar_enabled()
        assert hf_logging.is_progress_bar_enabled()
        with pytest.raises(RuntimeError), quiet_loading():
            raise RuntimeError("weights not found")
        assert hf_logging.is_progress_bar_enabled()
        hf_logging.disable_progress_bar()  # a caller that turned bars off keeps them off
        with quiet_loading():
            pass
        assert not hf_logging.is_progress_bar_enabled()
    finally:
        hf_logging.enable_progress_bar()
