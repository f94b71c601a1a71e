"""`micrograd playground`: the command that serves the playground until Ctrl-C."""

from __future__ import annotations

import sys
import threading
from typing import Any

from ..playground.serving.server import Playground, serve
from ..playground.serving.web import LOOPBACK, MAX_SESSIONS, share_urls, token_for


def add_playground_command(subparsers: Any) -> Any:
    """Register `micrograd playground` on an argparse subparsers object."""
    import argparse

    parser = subparsers.add_parser(
        "playground",
        help="open a local web page to watch backpropagation (and training) step by step",
        description="Start a local web server with the micrograd playground: the backprop "
        "explorer (type an expression, step the forward and backward pass node by node) and the "
        "training view. It prints its URL and opens your browser; Ctrl-C stops it.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--port",
        type=int,
        default=8000,
        metavar="N",
        help="port to listen on (default 8000; 0, or a taken port, picks a free one)",
    )
    parser.add_argument(
        "--host",
        default="127.0.0.1",
        metavar="H",
        help="address to listen on (default 127.0.0.1, this machine only; 0.0.0.0 shares the "
        "page with your network, behind a random token in the printed URL)",
    )
    parser.add_argument(
        "--token",
        default=None,
        metavar="T",
        help="the token every request must carry (default: a random one when --host is not "
        "this machine, none on 127.0.0.1); the printed URL includes it",
    )
    parser.add_argument(
        "--max-sessions",
        type=int,
        default=MAX_SESSIONS,
        metavar="N",
        help=f"browser tabs at once (default {MAX_SESSIONS}); past it a tab that is not watching "
        "its training makes room, and when all are, a new tab is told the cap is reached",
    )
    parser.add_argument("--no-browser", action="store_true", help="do not open a browser")
    parser.add_argument(
        "--no-jit", action="store_true", help="train without micrograd.jit (numpy) even if present"
    )
    parser.add_argument("--verbose", action="store_true", help="log every request to stderr")
    parser.set_defaults(run=run_playground)
    return parser


def run_playground(args: Any) -> int:
    """`micrograd playground`: serve until Ctrl-C (or SIGTERM); returns the exit status."""
    import os
    import signal

    # One BLAS thread per numpy call: the server runs a thread per playing tab, and BLAS's own
    # threads spinning against them made the largest network's 50x50 grid 4x slower (11 ms, not
    # 2.7). Set before numpy is first imported, which is now; the user's own setting wins.
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(var, "1")
    if not 0 <= args.port <= 65535:
        print(
            f"micrograd playground: error: --port must be 0 to 65535, got {args.port}",
            file=sys.stderr,
        )
        return 2
    if args.max_sessions < 1:
        print(
            f"micrograd playground: error: --max-sessions must be 1 or more, got "
            f"{args.max_sessions}",
            file=sys.stderr,
        )
        return 2
    done = threading.Event()

    def on_signal(signum: int, frame: Any) -> None:
        done.set()

    main_thread = threading.current_thread() is threading.main_thread()  # signals live there
    previous = signal.signal(signal.SIGTERM, on_signal) if main_thread else None
    previous_int = signal.getsignal(signal.SIGINT)
    handle: Playground | None = None
    # Ctrl-C may come at any moment, even while starting up: one try around all of it.
    try:
        try:
            handle = serve(
                args.host,
                args.port,
                open_browser=not args.no_browser,
                jit=not args.no_jit,
                verbose=args.verbose,
                token=token_for(args.host, args.token),
                max_sessions=args.max_sessions,
            )
        except (OSError, ValueError) as exc:
            print(f"micrograd playground: error: {exc}", file=sys.stderr)
            return 1
        if handle.note:
            print(f"micrograd playground: {handle.note}")
        if args.host.strip("[]") not in LOOPBACK:
            print(
                f"micrograd playground: warning: listening on {args.host}, so other machines on "
                f"your network can reach this page: only with the token in the URLs below; use "
                f"--host 127.0.0.1 to keep it to this machine",
                file=sys.stderr,
            )
        print(f"micrograd playground: serving {handle.url}  (Ctrl-C to stop)", flush=True)
        if args.host.strip("[]") not in LOOPBACK:
            urls = share_urls(handle.port, handle.token, args.host)
            if urls:
                print("micrograd playground: other machines open it at", flush=True)
                for url in urls:
                    print(f"  {url}", flush=True)
        while not done.wait(0.2):
            pass
    except KeyboardInterrupt:
        pass
    finally:
        if main_thread:
            signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C must not cut the stop
        try:
            if handle is not None:
                handle.stop()
        finally:  # even when the stop fails: a process (a notebook's kernel) that ignored
            # Ctrl-C from then on could never be interrupted again
            if main_thread:
                signal.signal(signal.SIGTERM, previous)
                signal.signal(signal.SIGINT, previous_int)
    print("micrograd playground: stopped", flush=True)
    return 0
