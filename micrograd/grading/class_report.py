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
import re
from collections import Counter

from .grade import RESULTS, Row

COLUMNS = ("learner", "submission", "notebook", "exercise", "result", "detail", "flag")
SUMMARY = ("learner", *RESULTS)
COLOURS = {
    "passed": "#2da44e",
    "failed": "#cf222e",
    "error": "#8250df",
    "timeout": "#bf8700",
    "blocked": "#6e7781",
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
        [
            (r.learner, r.submission, r.notebook, r.exercise, r.result, r.detail, r.flag)
            for r in rows
        ],
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


WRONG = ("failed", "error", "timeout")  # what a misconception is made of


def cause_of(detail: str) -> str:
    """A cause as learners share it: the numbers that differ from one learner to the next
    (their values, cells and lines) said as #, paths cut to their last part."""
    text = re.sub(r"(?<![\w`])/[^\s:,)]+/([^\s/:,)]+)", r"\1", detail)
    return re.sub(r"(?<![\w.])-?\d+(?:\.\d+)?(?:e[-+]?\d+)?(?!\w|\.[A-Za-z])", "#", text)


def misconceptions(rows: list[Row]) -> dict[str, list[tuple[str, list[str]]]]:
    """Per exercise column (in the rows' order), the causes of its wrong results grouped:
    (the cause, its learners), the most common first."""
    found: dict[str, dict[str, list[str]]] = {}
    for r in rows:
        if r.result in WRONG and r.exercise:
            who = found.setdefault(_column(r), {}).setdefault(cause_of(r.detail or r.result), [])
            if r.learner not in who:
                who.append(r.learner)
    return {
        column: sorted(causes.items(), key=lambda kv: (-len(kv[1]), kv[0]))
        for column, causes in found.items()
    }


def to_html(rows: list[Row], title: str = "micrograd grade") -> str:
    """One page, nothing fetched: a row per learner and a column per exercise, each cell
    coloured by its result, the learner and their score always in sight (headers and the two
    first columns stay put while the table scrolls under them); a row of totals and pass rates
    per exercise; filters by exercise, result and learner; a click on a result opens its cause
    right under its row; a click on a heading sorts. Then the class's Misconceptions: per
    exercise, the causes of its wrong results grouped and counted, each linking to its
    learners (a click shows only them)."""
    columns = list(dict.fromkeys(_column(r) for r in rows))
    per = counts(rows)
    table: dict[str, dict[str, Row]] = {}
    for r in rows:
        table.setdefault(r.learner, {})[_column(r)] = r
    totals = {c: Counter() for c in columns}
    for results in table.values():
        for c, r in results.items():
            totals[c][r.result] += 1
    e = html.escape
    head = (
        "<th scope=col class='who'>learner</th><th scope=col class='score'>passed</th>"
        + "".join(f"<th scope=col data-col='{e(c, quote=True)}'>{e(c)}</th>" for c in columns)
    )
    rates = "".join(
        f"<td data-col='{e(c, quote=True)}' title='{totals[c]['passed']} of "
        f"{sum(totals[c].values())} passed'>{_rate(totals[c])}</td>"
        for c in columns
    )
    class_passed = sum(t["passed"] for t in totals.values())
    class_all = sum(sum(t.values()) for t in totals.values())
    foot = (
        f"<tr class=rates><th scope=row class='who'>passed, of {len(table)}</th>"
        f"<td class='score'>{_percent(class_passed, class_all)}</td>{rates}</tr>"
    )
    body = []
    prefix = _common_prefix(list(table))
    flags = {r.learner: r.flag for r in rows if r.flag}
    for who, results in table.items():
        name = who or "(no folder)"
        short = name[len(prefix) :]
        flag = (
            f"<span class=flag title='{e(flags[who], quote=True)}'>⚑</span> "
            if who in flags
            else ""
        )
        tds = [
            f"<th scope=row class='who' title='{e(name, quote=True)}'>{flag}{e(short)}</th>",
            f"<td class='score' data-sort={per[who]['passed']}>{per[who]['passed']}/"
            f"{sum(per[who].values())}</td>",
        ]
        for c in columns:
            r = results.get(c)
            if r is None:
                tds.append("<td class=none data-sort=9>–</td>")
                continue
            cause = r.detail or r.result
            tds.append(
                f"<td class=r data-sort={RESULTS.index(r.result)} data-result='{e(r.result)}' "
                f"style='background:{COLOURS[r.result]}' tabindex=0 "
                f"data-cause='{e(f'{name} · {c} · {r.submission}: {cause}', quote=True)}'"
                f" title='{e(r.result, quote=True)}'>{e(r.result)}</td>"
            )
        flagged = " data-flag" if who in flags else ""
        body.append(f"<tr data-learner='{e(who, quote=True)}'{flagged}>" + "".join(tds) + "</tr>")
    data = json.dumps([r.__dict__ for r in rows]).replace("<", "\\u003c")
    legend = " ".join(
        f"<span class=key style='background:{COLOURS[k]}'>{e(k)}</span>" for k in RESULTS
    )
    options = "".join(f"<option>{e(c)}</option>" for c in columns)
    statuses = "".join(f"<option>{e(k)}</option>" for k in RESULTS)
    statuses += "<option value=flag>⚑ reached outside its folder</option>"
    reached = "".join(f"<li><strong>{e(who)}</strong>: {e(f)}</li>" for who, f in flags.items())
    reached = (
        f"<h2 id=reached>⚑ Reached outside their folder</h2><p>The sandbox stopped it; "
        f"these notebooks tried:</p><ul class=mis>{reached}</ul>"
        if flags
        else ""
    )
    views = []
    for column, causes in misconceptions(rows).items():
        items = "".join(
            f"<li><button type=button class=learners data-learners='"
            f"{e(json.dumps(who), quote=True)}' data-col='{e(column, quote=True)}'>"
            f"{len(who)} learner{'s' * (len(who) != 1)}</button>: <code>{e(cause)}</code></li>"
            for cause, who in causes
        )
        views.append(f"<li><strong>{e(column)}</strong><ul>{items}</ul></li>")
    mis = (
        f"<ul class=mis>{''.join(views)}</ul>"
        if views
        else "<p>No exercise failed: nothing to group.</p>"
    )
    return f"""<!doctype html>
<html lang=en><head><meta charset=utf-8>
<meta name=viewport content="width=device-width, initial-scale=1">
<title>{e(title)}</title>
<style>
body {{ font: 14px/1.4 system-ui, sans-serif; margin: .6em 1em; color: #1f2328; }}
h1 {{ font-size: 1.3em; margin: .2em 0; }} h2 {{ font-size: 1.1em; margin: 1em 0 .3em; }}
.bar {{ display: flex; flex-wrap: wrap; gap: .4em 1em; align-items: center; margin: .3em 0; }}
.wrap {{ overflow: auto; max-width: 100%; max-height: calc(100vh - 9em); min-height: 14em;
         border: 1px solid #d0d7de; }}
table {{ border-collapse: separate; border-spacing: 0; }}
th, td {{ border-right: 1px solid #d0d7de; border-bottom: 1px solid #d0d7de; padding: 3px 6px;
          white-space: nowrap; }}
thead th {{ cursor: pointer; background: #f6f8fa; position: sticky; top: 0; z-index: 2; }}
thead tr.rates th, thead tr.rates td {{ position: sticky; top: var(--head, 2em); z-index: 2;
          background: #eaeef2; font-size: 12px; cursor: default; }}
/* px, not em: the totals row's smaller font must not move its sticky cells */
table {{ --who: 150px; }}
.who {{ position: sticky; left: 0; z-index: 1; background: #fff; text-align: left;
        width: var(--who); min-width: var(--who); max-width: var(--who); overflow: hidden;
        text-overflow: ellipsis; }}
.score {{ position: sticky; left: calc(var(--who) + 13px); z-index: 1; background: #fff;
          text-align: right; box-shadow: 2px 0 0 #8c959f; }}
thead .who, thead .score {{ z-index: 3; background: #f6f8fa; }}
thead tr.rates .who, thead tr.rates .score {{ z-index: 3; background: #eaeef2; }}
thead th[aria-sort=ascending]::after {{ content: " ▲"; }}
thead th[aria-sort=descending]::after {{ content: " ▼"; }}
td.r {{ color: #fff; cursor: pointer; font-size: 12px; }}
td.r:focus {{ outline: 3px solid #0969da; outline-offset: -3px; }}
tr.cause td {{ background: #f6f8fa; white-space: pre-wrap; border-left: 4px solid #0969da; }}
tr.cause td div {{ position: sticky; left: 0; max-width: min(60em, 90vw); }}
.flag {{ color: #cf222e; }}
.key {{ color: #fff; padding: 1px 6px; border-radius: 3px; font-size: 12px; }}
.mis code {{ white-space: pre-wrap; }} .mis li {{ margin: .15em 0; }}
button.learners {{ font: inherit; cursor: pointer; }}
@media (max-width: 600px) {{ table {{ --who: 90px; }}
  .wrap {{ max-height: calc(100vh - 13em); }} }}
</style></head><body>
<h1>{e(title)}</h1>
<p class=bar>{legend}</p>
<p class=bar>
<label>Exercise <select id=fcol><option value="">any</option>{options}</select></label>
<label>Result <select id=fres><option value="">any</option>{statuses}</select></label>
<label>Learner <input id=fwho type=search size=12></label>
<button type=button id=fall hidden>Show every learner</button>
<span id=shown role=status></span></p>
<div class=wrap id=wrap><table id=grades><thead><tr>{head}</tr>{foot}</thead>
<tbody>{"".join(body)}</tbody></table></div>
<h2 id=misconceptions>Misconceptions</h2>
<p>Per exercise, the causes of its wrong results (failed, error, timeout), the same cause
grouped (numbers said as #); a count shows its learners.</p>
{mis}
{reached}
<script>
const table = document.getElementById("grades"), body = table.tBodies[0];
const wrap = document.getElementById("wrap"), shown = document.getElementById("shown");
const fcol = document.getElementById("fcol"), fres = document.getElementById("fres");
const fwho = document.getElementById("fwho"), fall = document.getElementById("fall");
const heads = [...table.tHead.rows[0].cells];
let only = null;  // the learners a misconception's link shows, or null
const fitHead = () => table.style.setProperty("--head", heads[0].offsetHeight + "px");
fitHead(); addEventListener("resize", fitHead);
const closeCause = () => body.querySelectorAll("tr.cause").forEach(tr => tr.remove());
function showCause(td) {{
  closeCause();
  const tr = document.createElement("tr"), cell = document.createElement("td"),
    div = document.createElement("div");
  tr.className = "cause"; cell.colSpan = heads.length; div.textContent = td.dataset.cause;
  cell.append(div); tr.append(cell); td.parentElement.after(tr);
  tr.scrollIntoView({{block: "nearest"}});
}}
table.addEventListener("click", e => {{
  const td = e.target.closest("td.r");
  if (td) showCause(td);
}});
table.addEventListener("keydown", e => {{
  if (e.key === "Enter" && e.target.matches("td.r")) showCause(e.target);
}});
function filter() {{
  closeCause();
  const col = fcol.value ? heads.findIndex(h => h.dataset.col === fcol.value) : -1;
  const res = fres.value, who = fwho.value.trim().toLowerCase();
  let n = 0;
  for (const tr of body.rows) {{
    const cells = col >= 0 ? [tr.cells[col]] : [...tr.cells].slice(2);
    const ok = (!res || (res === "flag" ? tr.hasAttribute("data-flag")
        : cells.some(c => c.dataset.result === res)))
      && (!who || tr.dataset.learner.toLowerCase().includes(who))
      && (!only || only.has(tr.dataset.learner));
    tr.hidden = !ok; n += ok;
  }}
  shown.textContent = `${{n}} of ${{body.rows.length}} learners shown`;
  fall.hidden = !(only || res || who || col >= 0);
}}
[fcol, fres].forEach(el => el.addEventListener("change", filter));
fwho.addEventListener("input", filter);
fall.addEventListener("click", () => {{
  only = null; fcol.value = fres.value = fwho.value = ""; filter();
}});
document.querySelectorAll("button.learners").forEach(b => b.addEventListener("click", () => {{
  only = new Set(JSON.parse(b.dataset.learners)); fcol.value = b.dataset.col; fres.value = "";
  fwho.value = ""; filter(); wrap.scrollIntoView({{block: "start"}});
  const col = heads.findIndex(h => h.dataset.col === b.dataset.col);
  if (col >= 0) wrap.scrollLeft = Math.max(0, heads[col].offsetLeft - heads[2].offsetLeft);
}}));
heads.forEach((th, col) => th.addEventListener("click", () => {{
  closeCause();
  const up = th.getAttribute("aria-sort") !== "ascending";
  heads.forEach(h => h.removeAttribute("aria-sort"));
  th.setAttribute("aria-sort", up ? "ascending" : "descending");
  const key = tr => {{
    const c = tr.children[col];
    return c.dataset.sort !== undefined ? Number(c.dataset.sort) : c.textContent;
  }};
  const rows = [...body.rows];
  rows.sort((a, b) => {{
    const x = key(a), y = key(b);
    const d = typeof x === "number" ? x - y : String(x).localeCompare(String(y));
    return up ? d : -d;
  }});
  body.append(...rows);
}}));
filter();
</script>
<script type=application/json id=data>{data}</script>
</body></html>
"""


def _common_prefix(names: list[str]) -> str:
    """What every learner's name starts with, up to a last '-' (GitHub Classroom's
    "assignment-"), so that the table shows what tells them apart; "" for fewer than two."""
    if len(names) < 2:
        return ""
    first, last = min(names), max(names)
    n = 0
    while n < min(len(first), len(last)) and first[n] == last[n]:
        n += 1
    return first[: first.rfind("-", 0, n) + 1]


def _percent(part: int, whole: int) -> str:
    return f"{100 * part / whole:.0f}%" if whole else "–"


def _rate(c: Counter) -> str:
    return f"{_percent(c['passed'], sum(c.values()))} ({c['passed']}/{sum(c.values())})"


NEXT = {  # what a learner can try next, by result
    "passed": "",
    "failed": "The check ran your code and found what is above: fix the exercise, then run its "
    "cell and the check after it again.",
    "error": "Your code raised this (the line is named where it is known): read the message, "
    "fix that line, then run the cells from the exercise down again.",
    "timeout": "This cell did not finish in time: look for a loop that never ends (a while "
    "loop whose condition stays true, a graph walked without remembering what was visited).",
    "blocked": "This exercise passes once the earlier one named here is right: fix that one "
    "first, then run everything below it again.",
    "not attempted": "Replace the `...` with your own code, then run the check below it.",
    "skipped": "The grader's machine lacks what this check needs: nothing for you to do.",
}


def _slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._") or "learner"


def feedback(rows: list[Row], title: str = "micrograd") -> dict[str, str]:
    """One page per learner (file name -> HTML), holding only their own results: each
    exercise's result, its cause in full and what to try next. No other learner's name,
    path or result is in it."""
    pages: dict[str, str] = {}
    mine: dict[str, list[Row]] = {}
    for r in rows:
        mine.setdefault(r.learner, []).append(r)
    e = html.escape
    for who, own in mine.items():
        name = who or "(no folder)"
        file = _slug(name.replace("\\", "/").rstrip("/").split("/")[-1]) + ".html"
        n = 2
        while file in pages:
            file, n = f"{file.removesuffix('.html').rsplit('~', 1)[0]}~{n}.html", n + 1
        got = Counter(r.result for r in own if r.exercise)
        items = []
        for r in own:
            what = _column(r)
            items.append(
                f"<li class={e(r.result.replace(' ', '-'))}><strong>{e(what)}</strong>: "
                f"<span class=result style='background:{COLOURS[r.result]}'>{e(r.result)}</span>"
                + (f"<p class=cause>{e(r.detail)}</p>" if r.detail else "")
                + (f"<p class=next>{e(NEXT[r.result])}</p>" if NEXT[r.result] else "")
                + "</li>"
            )
        summary = ", ".join(f"{got[k]} {k}" for k in RESULTS if got[k]) or "no exercises"
        pages[file] = f"""<!doctype html>
<html lang=en><head><meta charset=utf-8>
<meta name=viewport content="width=device-width, initial-scale=1">
<title>{e(title)}: {e(name)}</title>
<style>
body {{ font: 15px/1.5 system-ui, sans-serif; margin: 1em auto; max-width: 46em; padding: 0 1em;
        color: #1f2328; }}
ul {{ list-style: none; padding: 0; }} li {{ margin: .8em 0; padding-left: .6em;
        border-left: 4px solid #d0d7de; }}
li.passed {{ border-color: #2da44e; }} li.failed {{ border-color: #cf222e; }}
.result {{ color: #fff; padding: 1px 6px; border-radius: 3px; font-size: 13px; }}
.cause {{ white-space: pre-wrap; font-family: ui-monospace, monospace; font-size: 13px;
          margin: .3em 0; }}
.next {{ margin: .3em 0; color: #424a53; }}
</style></head><body>
<h1>{e(title)}: your results, {e(name)}</h1>
<p>{e(summary)}.</p>
<ul>{"".join(items)}</ul>
</body></html>
"""
    return pages
