"""The reports `micrograd grade` writes for a teacher: the rows as CSV, one row per learner
(`--summary`), and one offline HTML page, learners x exercises (`--html`).

Every CSV cell is written so that no spreadsheet runs it as a formula: a cell starting with
``= + - @``, a tab or a carriage return gets a leading apostrophe (OWASP's advice), which
spreadsheets show as text.
"""

from __future__ import annotations

import csv
import html
import io
import json
from collections import Counter

from .grade import RESULTS, Row

COLUMNS = ("learner", "submission", "notebook", "exercise", "result", "detail")
SUMMARY = ("learner", *RESULTS)
COLOURS = {
    "passed": "#2da44e",
    "failed": "#cf222e",
    "error": "#8250df",
    "timeout": "#bf8700",
    "not attempted": "#afb8c1",
    "skipped": "#54aeff",
}


def cell(text: str) -> str:
    """`text` as a CSV cell no spreadsheet takes for a formula."""
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def _csv(header: tuple[str, ...], rows: list[tuple[str, ...]]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    writer.writerows([cell(str(v)) for v in r] for r in rows)
    return out.getvalue()


def to_csv(rows: list[Row]) -> str:
    return _csv(
        COLUMNS,
        [(r.learner, r.submission, r.notebook, r.exercise, r.result, r.detail) for r in rows],
    )


def counts(rows: list[Row]) -> dict[str, Counter]:
    """Per learner (in the rows' order), how many rows had each result."""
    per: dict[str, Counter] = {}
    for r in rows:
        per.setdefault(r.learner, Counter())[r.result] += 1
    return per


def to_summary(rows: list[Row]) -> str:
    return _csv(SUMMARY, [(who, *(str(c[k]) for k in RESULTS)) for who, c in counts(rows).items()])


def _column(r: Row) -> str:
    return f"{r.notebook}: {r.exercise}" if r.exercise else f"{r.notebook}: (notebook)"


def to_html(rows: list[Row], title: str = "micrograd grade") -> str:
    """One page, nothing fetched: a table with a row per learner and a column per exercise, each
    cell coloured by its result; a click on a cell shows its cause, a click on a heading sorts."""
    columns = list(dict.fromkeys(_column(r) for r in rows))
    per = counts(rows)
    table: dict[str, dict[str, Row]] = {}
    for r in rows:
        table.setdefault(r.learner, {})[_column(r)] = r
    head = "".join(f"<th scope=col>{html.escape(c)}</th>" for c in ("learner", "passed", *columns))
    body = []
    for who, results in table.items():
        tds = [
            f"<th scope=row>{html.escape(who or '(no folder)')}</th>",
            f"<td data-sort={per[who]['passed']}>{per[who]['passed']}/"
            f"{sum(per[who].values())}</td>",
        ]
        for c in columns:
            r = results.get(c)
            if r is None:
                tds.append("<td class=none data-sort=9>–</td>")
                continue
            cause = r.detail or r.result
            tds.append(
                f"<td class=r data-sort={RESULTS.index(r.result)} "
                f"style='background:{COLOURS[r.result]}' tabindex=0 "
                f"data-cause='{html.escape(f'{who} · {c} · {r.submission}: {cause}', quote=True)}'"
                f" title='{html.escape(r.result, quote=True)}'>{html.escape(r.result)}</td>"
            )
        body.append("<tr>" + "".join(tds) + "</tr>")
    data = json.dumps([r.__dict__ for r in rows]).replace("<", "\\u003c")
    legend = " ".join(
        f"<span class=key style='background:{COLOURS[k]}'>{html.escape(k)}</span>" for k in RESULTS
    )
    return f"""<!doctype html>
<html lang=en><head><meta charset=utf-8>
<meta name=viewport content="width=device-width, initial-scale=1">
<title>{html.escape(title)}</title>
<style>
body {{ font: 14px/1.4 system-ui, sans-serif; margin: 1em; color: #1f2328; }}
.wrap {{ overflow: auto; max-width: 100%; }}
table {{ border-collapse: collapse; }}
th, td {{ border: 1px solid #d0d7de; padding: 3px 6px; white-space: nowrap; }}
thead th {{ cursor: pointer; background: #f6f8fa; position: sticky; top: 0; }}
tbody th {{ position: sticky; left: 0; background: #fff; text-align: left; }}
thead th[aria-sort=ascending]::after {{ content: " ▲"; }}
thead th[aria-sort=descending]::after {{ content: " ▼"; }}
td.r {{ color: #fff; cursor: pointer; font-size: 12px; }}
td.r:focus {{ outline: 3px solid #0969da; }}
.key {{ color: #fff; padding: 1px 6px; border-radius: 3px; font-size: 12px; }}
#cause {{ min-height: 2.8em; margin: .6em 0; padding: .4em .6em; background: #f6f8fa;
          border-left: 4px solid #0969da; white-space: pre-wrap; }}
</style></head><body>
<h1>{html.escape(title)}</h1>
<p>{legend}</p>
<p id=cause>Click a result to see its cause; click a heading to sort.</p>
<div class=wrap><table id=grades><thead><tr>{head}</tr></thead>
<tbody>{"".join(body)}</tbody></table></div>
<script>
const table = document.getElementById("grades"), cause = document.getElementById("cause");
table.addEventListener("click", e => {{
  const td = e.target.closest("td.r");
  if (td) cause.textContent = td.dataset.cause;
}});
table.addEventListener("keydown", e => {{
  if (e.key === "Enter" && e.target.matches("td.r")) cause.textContent = e.target.dataset.cause;
}});
table.querySelectorAll("thead th").forEach((th, col) => th.addEventListener("click", () => {{
  const up = th.getAttribute("aria-sort") !== "ascending";
  table.querySelectorAll("thead th").forEach(h => h.removeAttribute("aria-sort"));
  th.setAttribute("aria-sort", up ? "ascending" : "descending");
  const key = tr => {{
    const c = tr.children[col];
    return c.dataset.sort !== undefined ? Number(c.dataset.sort) : c.textContent;
  }};
  const rows = [...table.tBodies[0].rows];
  rows.sort((a, b) => {{
    const x = key(a), y = key(b);
    const d = typeof x === "number" ? x - y : String(x).localeCompare(String(y));
    return up ? d : -d;
  }});
  table.tBodies[0].append(...rows);
}}));
</script>
<script type=application/json id=data>{data}</script>
</body></html>
"""
