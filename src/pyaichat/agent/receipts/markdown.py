"""Markdown tables in an answer: for each number in one, its row's label, its column's header and the
table's first header cell — or that it is no value at all (a row's label cell, a header)."""

from __future__ import annotations

import bisect
import re

from .written import Written

_CELL = re.compile(r"(?<=\|)[^|]*(?=\|)")


_RULE = re.compile(r"^\|?[\s:|-]+\|?$")


_NUMERIC_CELL = re.compile(
    r"^[^A-Za-z]*\d[^A-Za-z]*(?:\s?(?:k|m|bn|B|M|million|billion|thousand))?[^A-Za-z]*$"
)


def table_cells(text: str, numbers: list[Written]) -> dict[int, tuple[str, str, str, bool]]:
    """Each number in a Markdown table, by where it starts: (its row's label, its column's header, the first
    header cell, whether it is no value: a label cell or a header). A table of one data row has no label
    column."""
    spans: list[tuple[int, int, tuple[str, str, str, bool]]] = []
    lines = text.split("\n")
    offsets = []
    pos = 0
    for line in lines:
        offsets.append(pos)
        pos += len(line) + 1
    i = 0
    while i < len(lines):
        if not (lines[i].lstrip().startswith("|") and lines[i].count("|") >= 2):
            i += 1
            continue
        block = []
        while i < len(lines) and lines[i].lstrip().startswith("|") and lines[i].count("|") >= 2:
            block.append(i)
            i += 1
        header: list[str] = []
        data = []
        for k in block:
            if _RULE.fullmatch(lines[k].strip()):
                continue
            cells = [(m.start() + offsets[k], m.end() + offsets[k]) for m in _CELL.finditer(lines[k])]
            names = [text[a:b].strip().strip("`*_ ") for a, b in cells]
            nxt = lines[k + 1].strip() if k + 1 < len(lines) else ""
            if not header and "-" in nxt and _RULE.fullmatch(nxt):
                header = names
                spans += [(a, b, ("", "", "", True)) for a, b in cells]  # the header's numbers are labels
                continue
            data.append((cells, names))
        one_row = len(data) == 1
        corner = header[0] if header else ""
        for cells, names in data:
            n_labels = 0 if one_row and names and _NUMERIC_CELL.match(names[0]) else 1
            while n_labels < min(len(names) - 1, 2) and not _NUMERIC_CELL.match(names[n_labels]):
                n_labels += 1  # "| 1 | tyrell | 35 |": a rank and a name label the row
            label = " ".join(n for n in names[:n_labels] if n)
            for j, (a, b) in enumerate(cells):
                spans.append((a, b, (label, header[j] if j < len(header) else "", corner, j < n_labels)))
    found: dict[int, tuple[str, str, str, bool]] = {}
    if not spans:
        return found
    spans.sort()
    starts = [a for a, _, _ in spans]
    for num in numbers:
        k = bisect.bisect_right(starts, num.start) - 1
        if k >= 0 and spans[k][0] <= num.start < spans[k][1]:
            found[num.start] = spans[k][2]
    return found
