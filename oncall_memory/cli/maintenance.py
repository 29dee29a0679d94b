"""Keeping the memory whole: `migrate`, `reindex`, `index`, `verify`, `backup`, `restore`."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import InvalidInput, OncallMemoryError, ServiceUnreachable
from .common import EXIT_FAILED

if TYPE_CHECKING:
    from ..settings import Settings
    from .remote import Service


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "migrate",
        help="copy a local-mode store (ONCALL_MEMORY_STORE=local) into the edge engine, or (--to URL) the embedded "
        "store into a Qdrant server or cluster",
    )
    p.add_argument("--to", metavar="URL", help="a Qdrant server or cluster (QDRANT_API_KEY is its key)")
    p.add_argument(
        "--shards", type=int, help="shards of the collection it creates there (ONCALL_MEMORY_QDRANT_SHARDS, 1)"
    )
    p.add_argument("--replicas", type=int, help="copies of each shard (ONCALL_MEMORY_QDRANT_REPLICAS, 1)")
    p.set_defaults(func=cmd_migrate)

    p = sub.add_parser("reindex", help="rebuild the collection with the configured embedder; swapped in when complete")
    p.set_defaults(func=cmd_reindex)

    p = sub.add_parser("index", help="build the embedded store's vector index now if due (--force: even if not)")
    p.add_argument("--force", action="store_true", help="build it now, even if it is not due")
    p.set_defaults(func=cmd_index)

    p = sub.add_parser("verify", help="read every stored point and check it against the collection's contract")
    p.add_argument("--json", action="store_true", help="print it as JSON")
    p.add_argument(
        "--source",
        type=Path,
        metavar="PATH",
        help="also compare the stored incidents with this backlog (as ingest reads it): which are missing or extra",
    )
    p.set_defaults(func=cmd_verify)

    p = sub.add_parser("backup", help="a consistent copy of the collection into a new directory")
    p.add_argument("path", type=Path, help="the new directory to copy it into")
    p.set_defaults(func=cmd_backup)

    p = sub.add_parser(
        "restore", help="put a backup in place of the collection (built beside, swapped in when complete)"
    )
    p.add_argument("path", type=Path, help="a directory `backup` made")
    p.set_defaults(func=cmd_restore)


def cmd_migrate(args: argparse.Namespace, settings: Settings) -> int:
    from ..memory import Memory

    if args.to:
        return _migrate_to(args, settings)
    copied = Memory.migrate(settings)
    print(
        f"copied {copied} incidents from the local-mode store into the edge store (no embedding calls); "
        f"the local-mode files under {settings.data_dir / 'qdrant'} are untouched"
    )
    return 0


def _migrate_to(args: argparse.Namespace, settings: Settings) -> int:
    from ..errors import InvalidInput
    from ..store.cluster import migrate_to
    from ..store.engines import open_edge, open_local
    from ..store.engines.qdrant import QdrantStore

    if not args.to.lower().startswith(("http://", "https://")):
        raise InvalidInput(f"--to takes a Qdrant server's URL (http(s)://host:6333), not {args.to!r}")
    shards = args.shards if args.shards is not None else settings.qdrant_shards
    replicas = args.replicas if args.replicas is not None else settings.qdrant_replicas
    if shards < 1 or replicas < 1:
        raise InvalidInput("--shards and --replicas are 1 or more")
    if settings.qdrant_url:
        raise InvalidInput("QDRANT_URL is set: the store is already a server; unset it to migrate the embedded one")
    key = settings.qdrant_api_key.get_secret_value() if settings.qdrant_api_key else None
    opened = open_local(settings) if settings.store == "local" else open_edge(settings)
    with (
        opened as source,
        QdrantStore.server(args.to, key, settings.collection, shards=shards, replicas=replicas) as target,
    ):
        report = migrate_to(source, target)
    print(
        f"copied {report.written} incidents into {settings.collection!r} at {args.to} "
        f"({report.already} were there already, the same; {report.target} held now; no embedding calls). "
        f"Point the memory at it: QDRANT_URL={args.to}"
        + (f" ONCALL_MEMORY_QDRANT_SHARDS={shards}" if shards > 1 else "")
        + (f" ONCALL_MEMORY_QDRANT_REPLICAS={replicas}" if replicas > 1 else "")
    )
    return 0


def cmd_reindex(args: argparse.Namespace, settings: Settings) -> int:
    from ..memory import Memory

    with Memory.open(settings) as memory:
        report = memory.reindex()
        model, dimension = memory.embedder.model, memory.embedder.dimension
    print(
        f"reindexed {report.new} incidents with {model} ({dimension} dims, "
        f"{report.embedding_calls} embedding calls) into {settings.collection!r}"
    )
    return 0


def cmd_index(args: argparse.Namespace, settings: Settings) -> int:
    from ..memory import Memory

    with Memory.open(settings) as memory:
        state = memory.index_state()
        if state is None:
            print(
                "nothing to do: this store indexes by itself (a Qdrant server) or searches exactly (local mode), "
                "or holds no collection yet"
            )
            return 0
        report = memory.build_index(force=args.force)
    if report is None:
        print(
            f"not due: {state.count} incidents, {state.indexed} indexed (threshold "
            f"{settings.index_threshold}; --force builds anyway)"
        )
        return 0
    print(
        f"vector index: {report.indexed} of {report.count} incidents indexed; copy {report.copy_seconds:.1f}s, "
        f"build {report.build_seconds:.1f}s, catch-up {report.replay_seconds:.1f}s ({report.replayed} written "
        f"meanwhile), swap {report.swap_seconds:.2f}s"
    )
    return 0


def cmd_verify(args: argparse.Namespace, settings: Settings) -> int:
    from ..domain.incident import Incident
    from ..memory import Memory
    from ..sources.files import read_backlog
    from . import remote
    from .service_memory import ServiceMemory

    shared = settings.dir.shared()  # opening the store makes them private: say what was found first
    source = None
    if args.source is not None:  # the backlog's valid incidents: its bad lines are ingest's to report
        source = [i for i in read_backlog(args.source) if isinstance(i, Incident)]
    url = remote.service_url(settings)  # a running service owns the memory: it checks it
    with ServiceMemory(settings, url) if url else Memory.open(settings) as memory:
        result = memory.verify(source)
    if args.json:
        print(
            json.dumps(
                {
                    "healthy": result.healthy,
                    "checked": result.checked,
                    "count": result.count,
                    "expected": result.expected,
                    "problems": result.problems + result.drift,
                    "drift": result.drift,
                    "missing": result.missing,
                    "extra": result.extra,
                    "recounted": result.recounted,
                    "made_private": [str(p) for p in shared],
                }
            )
        )
        return 0 if result.healthy else EXIT_FAILED
    if url:
        print(f"checked by the service at {url}, which owns this memory")
    if result.healthy:
        print(
            f"healthy: {result.checked} incidents read and checked"
            + (f", as many as were written ({result.expected})" if result.expected is not None else "")
            + (f"; every incident of {args.source} is stored" if source is not None else "")
        )
        if result.recounted:
            print(f"  the recorded count had drifted; it is {result.count} again, checked against {args.source}")
    elif result.problems:
        print(
            f"DAMAGED: {result.checked} incidents read; the engine counts {result.count}"
            + (f", {result.expected} were written" if result.expected is not None else "")
        )
        for problem in result.problems + result.drift:
            print(f"  - {problem}")
        print(
            "put a backup back with `oncall-memory restore BACKUP`, or rebuild from the backlog "
            "(`oncall-memory ingest ...` into a fresh data dir)"
        )
    else:
        print(
            f"DRIFTED: {result.checked} incidents read, none damaged; the engine counts {result.count}"
            + (f", {result.expected} were recorded as written" if result.expected is not None else "")
        )
        for problem in result.drift:
            print(f"  - {problem}")
    if shared:
        print(
            f"data dir: {len(shared)} files and folders were readable by others "
            f"({', '.join(str(p) for p in shared[:3])}{', ...' if len(shared) > 3 else ''}): made them 0600/0700"
        )
    elif settings.dir.root is not None:
        print(f"data dir: private (folders 0700, files 0600) at {settings.dir.root}")
    return 0 if result.healthy else EXIT_FAILED


def cmd_backup(args: argparse.Namespace, settings: Settings) -> int:
    from ..memory import Memory
    from . import remote

    if url := remote.service_url(settings):  # a running service owns the memory: it makes the copy
        count = _backup_through(settings, url, args.path)
        print(f"backed up {count} incidents of {settings.collection!r} to {args.path} (through the service at {url})")
        return 0
    with Memory.open(settings) as memory:
        manifest = memory.backup(args.path)
    print(f"backed up {manifest['count']} incidents of {manifest['collection']!r} to {args.path}")
    return 0


def _backup_through(settings: Settings, url: Service, path: Path) -> str:
    """The service's backup, unpacked into the new directory `path` (beside it first, renamed when whole)."""
    import shutil
    import tarfile

    from . import remote

    if path.exists():
        raise InvalidInput(f"{path} exists: give a new directory for the backup")
    partial = path.with_name(path.name + ".partial")
    if partial.exists() or partial.is_symlink():
        # Not ours to delete: an earlier backup's leftovers, or whatever someone keeps under that name.
        raise InvalidInput(f"{partial} exists (an interrupted backup's, or someone's): remove it, or give another path")
    partial.mkdir(parents=True)
    archive = partial / "backup.tar"
    try:
        headers = remote.download(url, "/backup", archive)
        with tarfile.open(archive) as tar:
            tar.extractall(partial, filter="data")  # names, links and modes kept inside the folder
        archive.unlink()
    except ServiceUnreachable as exc:
        shutil.rmtree(partial, ignore_errors=True)
        raise OncallMemoryError(f"the service at {url} did not answer ({exc}): is it still running?") from exc
    except (tarfile.TarError, EOFError) as exc:
        shutil.rmtree(partial, ignore_errors=True)
        raise OncallMemoryError(
            f"the service at {url} sent a backup that is not safe to unpack ({type(exc).__name__}: {exc}); "
            "nothing was written: is it really this memory's service?"
        ) from exc
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)
        raise
    partial.rename(path)
    return headers.get("x-backup-count", "?")


def cmd_restore(args: argparse.Namespace, settings: Settings) -> int:
    from ..memory import Memory

    restored = Memory.restore(settings, args.path)
    print(f"restored {restored} incidents into {settings.collection!r} from {args.path}")
    return 0
