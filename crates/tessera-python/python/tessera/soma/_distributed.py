"""``io.from_h5ads``: many ``.h5ad`` files into one experiment, written
side by side by a Dask cluster's workers.

The files are registered once, here (only their obs and var are read):
every cell and feature gets its joinid, as registering and appending the
files one after another would give them. The experiment is grown to hold
them all; then each worker writes its files' cells as fragments of their
own, reading a chunk of X at a time. The plan (the files, and the time
they were registered as of) is kept in the experiment's metadata until
the last file is written, with a mark for each file done: run again
after a failure (a worker that died, a store that refused), the call
registers the files as of that same time, so every joinid is what it
was, skips the files done and writes the rest again (cells written twice
are the same cells). Where the experiment is new, its first file is
written alone before anything is planned: if that write fails, remove
what it left and run again.
"""

import json
import time

from . import _context
from ._collection import Experiment
from ._errors import DoesNotExistError, SOMAValueError
from ._ingest import from_h5ad
from ._metadata import encode
from ._registration import _register, h5ad_inputs

# The experiment's metadata keys of an unfinished from_h5ads: the plan,
# and a mark per file written.
PLAN_KEY = "tessera_from_h5ads"
DONE_KEY = "tessera_from_h5ads_done_"


def from_h5ads(experiment_uri, h5ad_paths, measurement_name, *, client=None, obs_field_name="obs_id",
               var_field_name="var_id", context=None, X_layer_name="data", raw_X_layer_name="data",
               obs_id_name="obs_id", var_id_name="var_id", uns_keys=None, append_obsm_varm=False, progress=None):
    """Writes the ``.h5ad`` files ``h5ad_paths`` into the experiment at
    ``experiment_uri``, side by side on ``client``'s workers (a
    ``dask.distributed.Client``; ``None``: one after another here). The
    result is the experiment tiledbsoma's steps give: where there is none
    yet, the first file written alone (``from_h5ad``), then the others
    registered against the experiment (``register_h5ads``), the
    experiment grown to hold them (``prepare_experiment``) and each
    appended (``from_h5ad`` with the registration; obsm and varm only
    with ``append_obsm_varm``, as tiledbsoma's). Files must be
    readable at their paths by every worker. ``progress(path)`` is called
    as each file is done. Run again after a failure, the call finishes
    what was left (see the module's text)."""
    uri = str(experiment_uri)
    paths = [str(p) for p in h5ad_paths]
    if not paths:
        raise SOMAValueError("from_h5ads: no .h5ad files given")
    options = _context.options_for(uri, context)
    settings = dict(measurement_name=measurement_name, X_layer_name=X_layer_name, raw_X_layer_name=raw_X_layer_name,
                    obs_id_name=obs_id_name, var_id_name=var_id_name, uns_keys=uns_keys)
    experiment = _experiment(uri, options)
    plan, done = _recorded(experiment, paths, measurement_name)
    if plan is None:
        registered = list(range(len(paths)))
        if experiment is None:
            _write_part(uri, paths[0], None, None, options, settings)
            _report(progress, paths[0])
            registered = registered[1:]
        plan = {"paths": paths, "measurement_name": measurement_name, "obs_field_name": obs_field_name,
                "var_field_name": var_field_name, "registered": registered, "registered_at": _now_passed()}
        _put_metadata(uri, options, {PLAN_KEY: json.dumps(plan)})
    registered = plan["registered"]
    todo = [i for i in registered if i not in done]
    if todo:
        mapping = _register(uri, h5ad_inputs([paths[i] for i in registered], append_obsm_varm), measurement_name,
                            plan["obs_field_name"], plan["var_field_name"], _context.with_options(options), False,
                            timestamp=plan["registered_at"])
        mapping.prepare_experiment(uri, context=_context.with_options(options))
        parts = [(i, mapping.subset_for_h5ad(paths[i])) for i in todo]
        if client is None:
            for i, subset in parts:
                _write_part(uri, paths[i], i, subset, options, settings)
                _report(progress, paths[i])
        else:
            _on_cluster(client, uri, paths, parts, options, settings, progress)
    _put_metadata(uri, options, {PLAN_KEY: None, **{f"{DONE_KEY}{i}": None for i in range(len(paths))}})


def _on_cluster(client, uri, paths, parts, options, settings, progress):
    """Each part a task on ``client``'s workers; waits for all, then
    raises the first failure, naming its file."""
    from distributed import as_completed

    futures = {client.submit(_write_part, uri, paths[i], i, subset, options, settings,
                             key=f"tessera-from-h5ads-{i}-{time.time_ns()}", pure=False): paths[i]
               for i, subset in parts}
    failed = []
    for future in as_completed(futures):
        try:
            future.result()
            _report(progress, futures[future])
        except Exception as e:  # noqa: BLE001 (every file is waited for, then the failures named)
            failed.append((futures[future], e))
    if failed:
        path, error = failed[0]
        raise SOMAValueError(f"from_h5ads: {len(failed)} of {len(parts)} files failed, {path} first: {error}; "
                             "run the same call again to finish") from error


def _write_part(uri, path, index, mapping, options, settings):
    """One file written into the experiment (on a worker), then marked
    done (``index``: its place in the plan; ``None``, and no ``mapping``:
    the first file of a new experiment)."""
    from_h5ad(uri, path, settings["measurement_name"], context=_context.with_options(options),
              obs_id_name=settings["obs_id_name"], var_id_name=settings["var_id_name"],
              X_layer_name=settings["X_layer_name"], raw_X_layer_name=settings["raw_X_layer_name"],
              ingest_mode="write", registration_mapping=mapping, uns_keys=settings["uns_keys"])
    if index is not None:
        _put_metadata(uri, options, {f"{DONE_KEY}{index}": path})


def _report(progress, path):
    if progress is not None:
        progress(path)


def _experiment(uri, options):
    """The experiment at ``uri`` opened for reading, or ``None``."""
    try:
        return Experiment.open(uri, context=_context.with_options(options))
    except DoesNotExistError:
        return None


def _now_passed():
    """Now (milliseconds), with the clock past it before anything more is
    written: registration sees the experiment as of this time."""
    at = time.time_ns() // 1_000_000
    while time.time_ns() // 1_000_000 <= at:
        time.sleep(0.001)
    return at


def _recorded(experiment, paths, measurement_name):
    """The plan an interrupted call with the same files left in the
    metadata of ``experiment`` (``None``: none, or no experiment), and the
    indices of the files it marked written."""
    metadata = experiment.metadata if experiment is not None else {}
    raw = metadata.get(PLAN_KEY)
    if not raw:
        return None, set()
    plan = json.loads(raw)
    if plan["paths"] != paths or plan["measurement_name"] != measurement_name:
        raise SOMAValueError(f"{experiment.uri}: an unfinished from_h5ads of other files "
                             f"({', '.join(plan['paths'])}) is recorded in its metadata: finish it by running it "
                             "again first")
    return plan, {int(k[len(DONE_KEY):]) for k in metadata.keys() if k.startswith(DONE_KEY)}


def _put_metadata(uri, options, entries):
    """Sets (``None``: deletes) keys of the experiment's metadata, in one write."""
    experiment = Experiment.open(uri, "w", context=_context.with_options(options))
    puts = [(k, *encode(k, v)) for k, v in entries.items() if v is not None]
    deletes = [k for k, v in entries.items() if v is None and k in experiment.metadata]
    if puts or deletes:
        experiment._put_metadata(puts, deletes)
