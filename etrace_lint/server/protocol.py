"""The language server: one handler per LSP method, over the scheduler, the store and the runner.

JAX is never imported here: models run in the warm worker processes of two
long-lived lanes (``lanes``: a save's static pass in one, the probe's pass and
``--verify`` in the other), with the CLI's crash and timeout isolation, and
each lane's thread only waits on them.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import threading
from typing import BinaryIO, Iterable, Sequence, TypeAlias

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams
from pygls.io_ import StdoutWriter
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.json_rpc import MsgId

from .. import __version__
from ..core.findings import Finding, TargetResult
from ..core.rule import DOCS_URL
from ..discovery.discover import TargetSpec, read_source, targets_in_source
from . import trust
from .actions import fix_actions, rule_hover, suppression_actions
from .diagnostics import Lines, finding_diagnostic, notice_diagnostic, tool_error_diagnostic
from .folders import Folder, Folders, OptionsError, ServerOptions
from .lanes import Lane
from .linting import LintPlan, RunStopped, plan_lint, plan_verify, run_plan
from .progress import WorkDone
from .scheduler import Run, Scheduler
from .store import PlacedToolError
from .transport import Lifecycle, serve
from .uris import path_to_uri, uri_to_path

log = logging.getLogger(__name__)

VERIFY_COMMAND = "etrace-lint.verify"

# what a published diagnostic shows: a finding, a tool error, or what the server says about a file
Problem: TypeAlias = Finding | PlacedToolError | types.Diagnostic


class _Protocol(LanguageServerProtocol):
    """Tells the server about ``$/cancelRequest``: pygls cancels the request's future, but a
    command keeps running in its lane's thread until it is told to stop."""

    def _handle_cancel_notification(self, msg_id: MsgId) -> None:
        super()._handle_cancel_notification(msg_id)
        if isinstance(self._server, EtraceLintServer):  # the one server this protocol is made for
            self._server.cancel_command(msg_id)


class EtraceLintServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("etrace-lint", __version__, protocol_cls=_Protocol,
                         text_document_sync_kind=types.TextDocumentSyncKind.Full)
        self.options = ServerOptions()
        self.folders = Folders(self.options)
        self.published: dict[str, list[types.Diagnostic]] = {}
        self._shown: dict[str, Sequence[Problem]] = {}  # uri -> the problems its published diagnostics show
        self.notices: dict[str, types.Diagnostic] = {}  # path -> what the server says instead of linting
        # a save's static pass, published at once, runs beside the previous save's probe pass
        self.static_lane = Lane("static")
        self.probe_lane = Lane("probe")  # the probe's passes and --verify
        self.scheduler: Scheduler | None = None
        self._requests: dict[MsgId | None, Run] = {}  # request id -> Run of a running command
        self._closed = False

    # -- set-up -------------------------------------------------------------

    def start_io(self, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None) -> None:
        """pygls's start_io with a reader that survives malformed frames and answers every request."""
        stop = self._stop_event = threading.Event()  # pygls's shutdown() sets it
        # pygls's own defaults, the process's standard streams
        self.protocol.set_writer(StdoutWriter(stdout or sys.stdout.buffer))
        try:
            lifecycle = Lifecycle(tell_client=self._log_to_client, initialized=lambda: self.scheduler is not None,
                                  shutting_down=lambda: self._closed)
            asyncio.run(serve(self.protocol, stdin or sys.stdin.buffer, stop, lifecycle))
        except BrokenPipeError:
            log.error("the client closed the connection")
        except (KeyboardInterrupt, SystemExit):  # pygls ends the process on `exit` with sys.exit
            pass
        finally:
            self.shutdown()  # type: ignore[no-untyped-call]  # pygls's JsonRPCServer.shutdown has no annotations

    def _log_to_client(self, text: str) -> None:
        try:
            self.window_log_message(types.LogMessageParams(types.MessageType.Warning, text))
        except Exception:  # the client may be gone: the server log has it already
            log.debug("could not log to the client", exc_info=True)

    def setup(self, params: types.InitializeParams) -> None:
        try:
            self.options = ServerOptions.parse(params.initialization_options)
        except OptionsError as exc:
            self.options = ServerOptions()
            self.window_show_message(types.ShowMessageParams(types.MessageType.Error, f"etrace-lint: {exc}"))
        self.folders = Folders(self.options)
        roots = [uri_to_path(f.uri) for f in params.workspace_folders or ()]
        if not roots and params.root_uri:
            roots = [uri_to_path(params.root_uri)]
        elif not roots and params.root_path:
            roots = [os.path.abspath(params.root_path)]
        for root in filter(None, roots):
            self.folders.add(root)
        self.scheduler = Scheduler(self._plan, self._execute, self._apply)

    def start_pools(self) -> None:
        """Start the lanes' warm workers once a workspace may run code: the first save then pays no start-up.
        The probe's lane starts with them where a folder probes; a --verify command starts it otherwise."""
        configured = [f.settings for f in self.folders if f.trusted and f.settings]
        self.static_lane.start(configured)
        self.probe_lane.start([settings for settings in configured if settings.probe])

    def close(self) -> None:
        """Stop what runs, then the workers (in each lane's thread, once the run there has stopped)."""
        if self._closed:
            return
        self._closed = True
        if self.scheduler is not None:
            self.scheduler.stop_all()

        for lane in (self.static_lane, self.probe_lane):
            lane.close()

    # -- documents ------------------------------------------------------------

    def file_event(self, uri: str) -> None:
        """A document was opened or saved."""
        path = uri_to_path(uri)
        if path is None:
            return
        folder = self.folders.folder_of(path)
        if folder is None:
            if self.folders.workspace_of(path) is not None and path.endswith(".py") and _has_targets(path):
                real = os.path.realpath(path)  # a link inside the workspace to a file outside it
                self.notices[path] = self._notice(path, trust.outside_message(real),
                                                  types.DiagnosticSeverity.Information)
                self.publish()
            log.info("not linting %s: outside the workspace folders", path)
            return
        if os.path.basename(path) == "pyproject.toml":
            self.reload(folder)
            return
        if not path.endswith(".py"):
            return
        if folder.error is not None:
            self.notices[path] = self._notice(path, f"etrace-lint: {folder.error}", types.DiagnosticSeverity.Error)
            self.publish()
            return
        if not folder.trusted:
            if _has_targets(path):
                self.notices[path] = self._notice(path, trust.untrusted_message(folder.root, folder.nested),
                                                  types.DiagnosticSeverity.Information)
                self.publish()
            return
        if self.notices.pop(path, None) is not None:
            self.publish()
        if self.scheduler is None:  # before initialize there are no folders: no file gets this far
            return
        self.start_pools()
        self.scheduler.request(folder, path)

    def reload(self, folder: Folder) -> None:
        """pyproject.toml was saved: read the settings again, and lint the open files anew."""
        folder = self.folders.reload(folder.root)
        for path in [p for p in self.notices if self.folders.folder_of(p) is folder]:
            del self.notices[path]
        self.publish()
        for uri in list(self.workspace.text_documents):
            opened = uri_to_path(uri)
            if opened and opened.endswith(".py") and self.folders.folder_of(opened) is folder:
                self.file_event(uri)

    def _encoding(self) -> str:
        """The position encoding agreed with the client; pygls's default where none was."""
        return self.workspace.position_encoding or types.PositionEncodingKind.Utf16

    def _notice(self, path: str, message: str, severity: types.DiagnosticSeverity) -> types.Diagnostic:
        lines = Lines().of(path)
        return notice_diagnostic(message, severity, lines, encoding=self._encoding())

    # -- linting ----------------------------------------------------------------

    async def _plan(self, folder: Folder, files: list[str]) -> LintPlan:
        return await self.static_lane.call(plan_lint, folder, files)

    async def _execute(self, plan: LintPlan, run: Run) -> list[TargetResult]:
        names = sorted({os.path.basename(spec.path) for spec in plan.specs})
        doing = "verifying" if plan.verify else "probing the learning signal of" if plan.probes() else "linting"
        title = f"etrace-lint: {doing} {', '.join(names) or 'nothing'}"
        progress = WorkDone(self, title, on_cancel=run.cancel)
        if plan.specs:  # a helper module nothing imports has nothing to show progress for
            progress.start()

        def report(done: int, total: int, spec: TargetSpec) -> None:
            run.check()  # a stopped run ends here, in the runner's loop, which stops its workers
            progress.report(done, total, spec)

        lane = self.probe_lane if plan.probes() or plan.verify else self.static_lane

        def work() -> list[TargetResult]:
            run.check()
            return run_plan(plan, lane.pool, report)

        outcome = "stopped"
        try:
            results = await lane.call(work)
            outcome = f"{len(results)} model{'s' if len(results) != 1 else ''}"
            return results
        finally:
            progress.end(outcome)

    def _apply(self, plan: LintPlan, pairs: list[tuple[TargetSpec, TargetResult]], rediscovered: list[str]) -> None:
        if not pairs and not rediscovered:
            return  # everything was stale: the newer save's lint publishes
        errors = {path: error for path, error in plan.file_errors.items() if path in rediscovered}
        plan.folder.store.update(rediscovered, errors, pairs)
        # The files a save's first pass linted are sent even when nothing changed: the editor learns
        # the lint is done. The probe's pass that follows sends only what it changed; by then the
        # editor may hold a newer save, for which the same diagnostics again would read as its answer.
        touched = set() if plan.probes() else set(rediscovered) | {spec.path for spec, _ in pairs} | {
            f.path for _, result in pairs for f in result.findings}
        self.publish(touched)

    async def verify(self, uri: object) -> dict[str, int | bool]:
        """Run ``--verify`` for the targets of one file and publish what it finds. ``uri``: the
        command's argument, as the client sent it."""
        path = uri_to_path(uri) if isinstance(uri, str) else None
        folder = self.folders.folder_of(path) if path else None
        scheduler = self.scheduler  # set by initialize, which comes before any command
        if scheduler is None or path is None or folder is None or not folder.trusted or folder.settings is None:
            raise JsonRpcInvalidParams(message=f"Invalid params: etrace-lint does not run {uri!r}: it is not a "
                                               "file of a workspace folder, or the folder is not trusted or not "
                                               "configured")
        plan = await self.probe_lane.call(plan_verify, folder, path)
        run = Run()
        msg_id = self.protocol.msg_id
        self._requests[msg_id] = run
        self.probe_lane.start([folder.settings])
        try:
            await scheduler.run_once(plan, run)
        except RunStopped:
            return {"targets": len(plan.specs), "verified": False}
        finally:
            self._requests.pop(msg_id, None)
        return {"targets": len(plan.specs), "verified": True}

    def cancel_command(self, msg_id: MsgId) -> None:
        """``$/cancelRequest`` for a running command: its run stops at its next check. (pygls's own
        ``cancel_request`` is the other way round: it asks the client to cancel.)"""
        run = self._requests.get(msg_id)
        if run is not None:
            run.cancel()

    # -- publishing ---------------------------------------------------------------

    def publish(self, touched: Iterable[str] = frozenset()) -> None:
        """Send every file whose problems changed, an empty list where they went away, and the
        ``touched`` files whatever they hold. A file whose problems did not change keeps the
        diagnostics it was sent, even if its text changed since: a newer lint will say."""
        encoding = self._encoding()
        lines = Lines()
        wanted: dict[str, Sequence[Problem]] = {}
        docs_urls: dict[str, str] = {}  # each file's folder's docs-url, where its codes link to
        for folder in self.folders:
            if folder.settings is not None and folder.trusted:
                for path, held in folder.store.problems(folder.settings.for_policy()).items():
                    wanted[path_to_uri(path)] = held
                    docs_urls[path_to_uri(path)] = folder.settings.docs_url
        for path, notice in self.notices.items():
            wanted[path_to_uri(path)] = [notice]
        touched_uris = {path_to_uri(path) for path in touched}
        published: dict[str, list[types.Diagnostic]] = {}
        for uri in sorted(set(wanted) | set(self._shown) | touched_uris):
            problems = wanted.get(uri, [])
            if problems == self._shown.get(uri, []) and uri not in touched_uris:
                published[uri] = self.published.get(uri, [])
                continue
            published[uri] = [self._diagnostic(p, lines, encoding, docs_urls.get(uri, DOCS_URL)) for p in problems]
            self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=published[uri]))
        self._shown = {uri: problems for uri, problems in wanted.items() if problems}
        self.published = {uri: d for uri, d in published.items() if d}

    @staticmethod
    def _diagnostic(problem: Problem, lines: Lines, encoding: str, docs_url: str) -> types.Diagnostic:
        if isinstance(problem, types.Diagnostic):
            return problem
        if isinstance(problem, PlacedToolError):
            return tool_error_diagnostic(problem.error, problem.place, lines, encoding)
        return finding_diagnostic(problem, lines, encoding, docs_url)


def _document_lines(ls: EtraceLintServer, uri: str) -> list[str]:
    """The text of a document a request is about: the editor's buffer, else the file on disk."""
    try:
        return ls.workspace.get_text_document(uri).source.splitlines(keepends=True)
    except (OSError, ValueError, TypeError) as exc:
        raise JsonRpcInvalidParams(message=f"Invalid params: cannot read the document {uri!r}: {exc}") from None


def _has_targets(path: str) -> bool:
    """Static: would linting this file run anything?"""
    try:
        return bool(targets_in_source(path, read_source(path)))
    except (OSError, SyntaxError, ValueError):
        return False


def build_server() -> EtraceLintServer:
    server = EtraceLintServer()

    @server.feature(types.INITIALIZE)
    def initialize(ls: EtraceLintServer, params: types.InitializeParams) -> None:
        ls.setup(params)

    @server.feature(types.INITIALIZED)
    def initialized(ls: EtraceLintServer, params: types.InitializedParams) -> None:
        # the workers import JAX while the user reads the file; the first save finds them warm
        ls.start_pools()

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: EtraceLintServer, params: types.DidOpenTextDocumentParams) -> None:
        ls.file_event(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: EtraceLintServer, params: types.DidSaveTextDocumentParams) -> None:
        ls.file_event(params.text_document.uri)

    @server.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
    def folders_changed(ls: EtraceLintServer, params: types.DidChangeWorkspaceFoldersParams) -> None:
        for removed in params.event.removed:
            if (path := uri_to_path(removed.uri)) is not None:
                ls.folders.remove(path)
        for added in params.event.added:
            if (path := uri_to_path(added.uri)) is not None:
                ls.folders.add(path)
        ls.publish()

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    def hover(ls: EtraceLintServer, params: types.HoverParams) -> types.Hover | None:
        lines = _document_lines(ls, params.text_document.uri)
        line_text = lines[params.position.line] if params.position.line < len(lines) else ""
        return rule_hover(ls.published.get(params.text_document.uri, []), line_text, params.position)

    @server.feature(types.TEXT_DOCUMENT_CODE_ACTION,
                    types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix]))
    def code_action(ls: EtraceLintServer, params: types.CodeActionParams) -> list[types.CodeAction] | None:
        uri = params.text_document.uri
        source = "".join(_document_lines(ls, uri))
        published = ls.published.get(uri, [])
        actions = fix_actions(published, params.range, lambda path: ls.workspace.get_text_document(
            path_to_uri(path)).source, path_to_uri)
        return actions + suppression_actions(uri, source, published, params.range) or None

    @server.command(VERIFY_COMMAND)
    async def verify(ls: EtraceLintServer, *arguments: object) -> dict[str, int | bool]:
        if len(arguments) != 1:
            raise JsonRpcInvalidParams(message=f"Invalid params: {VERIFY_COMMAND} takes one argument, the "
                                               f"document's URI; it got {len(arguments)}")
        return await ls.verify(arguments[0])

    @server.feature(types.SHUTDOWN)
    def shutdown(ls: EtraceLintServer, *args: object) -> None:
        ls.close()

    return server
