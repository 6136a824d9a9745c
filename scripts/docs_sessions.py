"""Record the documentation's terminal session: pyaichat in a real pseudo-terminal, its model the scripted
OpenAI-compatible server the tests use, what the terminal shows written into the pages and drawn as a picture.

    .venv/bin/python scripts/docs_sessions.py           # record again: the pages' session blocks and the SVG
    .venv/bin/python scripts/docs_sessions.py --check   # exit 1 when pyaichat shows other than the pages

The person's keys are typed into ``python -m pyaichat`` (pexpect), its output fed to a VT100 emulator (pyte)
of 100 columns, and the final screen is the recording: its text goes between the marked comments of
``docs/getting-started/first-five-minutes.md`` (the whole session) and ``docs/using/proposals.md`` (from the
proposal on), its colours into ``docs/assets/session.svg`` (rich's SVG export), which the README and the home
page show. The model's replies are scripted (tests/fakes/openai_server.py answers from a queue); everything
else — the tool calls, their results, the preview, the panel, /undo — is pyaichat's own. Timings (``2 ms``)
differ from run to run: ``--check`` compares with every figure followed by ``ms`` or ``s`` masked."""

from __future__ import annotations

import argparse
import io
import itertools
import re
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(ROOT / "tests"))

from generated_regions import check_or_write, part_of  # noqa: E402  (scripts/ and tests/, on the path above)

SCRIPT = "scripts/docs_sessions.py"
COLUMNS, ROWS = 100, 80  # tall enough that nothing scrolls away: the whole session is one screen
SVG = ROOT / "docs" / "assets" / "session.svg"

INPUTS = [
    "import pandas as pd",
    'df = pd.DataFrame({"city": ["Oslo", "Lima"], "temp": ["3", "18"]})',
    "sum(df.temp)",
]
QUESTION = "why can't I add up df.temp?"
FIX = 'df = df.astype({"temp": int})'


def script_the_model(server) -> None:
    """What the model says, in order; pyaichat does the rest."""
    server.tool("eval_expr", {"expr": "df.temp.dtype"})
    server.tool("get_repr", {"expr": "df.temp"})
    server.text(
        "`df.temp` holds **strings** (`'3'`, `'18'`), and `sum` starts from the number 0: `0 + '3'` fails. "
        "Convert the column to numbers first."
    )
    server.tool(
        "propose_code", {"code": FIX, "explanation": "Convert temp to integers so it can be added up."}
    )
    server.text("Converted: `df.temp` holds integers now.")


def record() -> list[str]:
    """Run the session; the screen's rows (trailing blank rows dropped), each with pyte's character cells."""
    from fakes.openai_server import ScriptedServer
    from pty_terminal import Screen, spawn, type_line

    with ScriptedServer() as server, tempfile.TemporaryDirectory() as tmp:
        script_the_model(server)
        child = spawn(
            Path(tmp), wait=False, PYAICHAT_MODEL="openai/demo", PYAICHAT_API_BASE=server.base_url,
            OPENAI_API_KEY="sk-demo", PYAICHAT_AUTOSAVE="off",
        )  # fmt: skip
        child.setwinsize(ROWS, COLUMNS)  # before pyaichat draws anything it waits for
        screen = Screen(child, COLUMNS, ROWS)
        screen.wait_for(r"^>>>$", timeout=60)
        try:
            for line in INPUTS:
                type_line(child, line)
                screen.wait_for(rf"^>>> {re.escape(line)}$(\n.*)*\n>>>$", timeout=60)
                screen.pump(0.5)
            child.send("\t")
            screen.wait_for(r"^ai>$", timeout=30)
            type_line(child, QUESTION)
            screen.wait_for(r"^tokens: .*\nai>\Z", timeout=120)
            type_line(child, "fix it")
            screen.wait_for(r"\[r\]un / \[e\]dit / \[n\]o", timeout=120)
            screen.pump(0.5)
            child.send("r")
            screen.wait_for(r"integers now\.(\n.*)*\ntokens: .*\nai>\Z", timeout=60)
            type_line(child, "/undo")
            screen.wait_for(r"input \d+ undone\..*(\n.*)*\nai>\Z", timeout=30)
            screen.pump(1.0)
        finally:
            child.close(force=True)
    buffer = screen.screen.buffer
    rows = [[buffer[y][x] for x in range(COLUMNS)] for y in range(ROWS)]
    while rows and not "".join(cell.data for cell in rows[-1]).strip():
        rows.pop()
    return rows


def text_of(rows) -> str:
    return "\n".join("".join(cell.data for cell in row).rstrip() for row in rows)


def masked(text: str) -> str:
    """``text`` with its timings made equal: they differ from one recording to the next."""
    return re.sub(r"\b\d+(\.\d+)? ?(ms|s)\b", "N \\2", text)


def _color(name: str) -> str | None:
    if name == "default":
        return None
    if re.fullmatch(r"[0-9a-fA-F]{6}", name):
        return "#" + name
    name = name.replace("brown", "yellow")  # pyte's names: brown, brightbrown; rich's: yellow, bright_yellow
    if name.startswith("bright") and not name.startswith("bright_"):
        return "bright_" + name[len("bright") :]
    return name


def svg_of(rows) -> str:
    """The screen as rich draws a terminal: every cell's colour, bold, italics and underline kept."""
    from rich.console import Console
    from rich.style import Style
    from rich.text import Text

    console = Console(
        record=True, width=COLUMNS, file=io.StringIO(), force_terminal=True, color_system="truecolor"
    )
    for row in rows:
        line = Text()
        for _, run in itertools.groupby(
            row, key=lambda cell: cell[1:]
        ):  # a run of cells drawn alike: one span
            cells = list(run)
            first = cells[0]
            fg, bg = _color(first.fg), _color(first.bg)
            if first.reverse:
                fg, bg = bg or "black", fg or "white"
            style = Style(
                color=fg, bgcolor=bg, bold=first.bold, italic=first.italics, underline=first.underscore
            )
            line.append("".join(cell.data for cell in cells), style)
        line.rstrip()
        console.print(line, soft_wrap=True)
    return console.export_svg(title="pyaichat")


def pages_from(text: str) -> dict[str, dict[str, str]]:
    start = text.index("ai> fix it")
    return {
        "docs/getting-started/first-five-minutes.md": {"first-five": "```text\n" + text + "\n```"},
        "docs/using/proposals.md": {"proposal": "```text\n" + text[start:] + "\n```"},
    }


def recorded_pages() -> dict[str, dict[str, str]]:
    """What the pages hold now, timings masked (for ``--check``)."""
    return {
        page: {part: masked(part_of((ROOT / page).read_text(encoding="utf-8"), SCRIPT, part)).rstrip("\n")}
        for page, parts in pages_from("ai> fix it").items()
        for part in parts
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--check", action="store_true", help="record, and only say whether the pages still match"
    )
    options = parser.parse_args(argv)
    rows = record()
    text = text_of(rows)
    if options.check:
        fresh = {
            page: {part: masked(body) for part, body in parts.items()}
            for page, parts in pages_from(text).items()
        }
        if fresh != recorded_pages():
            print(
                f"The recorded session differs from the pages. Run: python {SCRIPT}\n\n{text}",
                file=sys.stderr,
            )
            return 1
        return 0
    for page in check_or_write(ROOT, SCRIPT, pages_from(text), check=False):
        print(f"rewrote {page}")
    SVG.parent.mkdir(exist_ok=True)
    SVG.write_text(svg_of(rows), encoding="utf-8")
    print(f"wrote {SVG.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
