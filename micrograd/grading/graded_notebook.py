"""How the notebook that runs is put together from a learner's copy (`compose`: their cells,
the course's check cells in place, whatever the copy did to them), and put together again with
the course's solution in an exercise's place (`with_solutions`), to tell an exercise that is
wrong from one that only stands on a wrong one (`blame`: the `blocked` rows); and the hand-out
a class gets instead, `without_solutions` (`micrograd course` and `micrograd site`)."""

from __future__ import annotations

import copy
import dataclasses
import re
from dataclasses import dataclass
from typing import Any

RERUNS = 3  # runs at most, beyond the first, to find which exercise blocks which


def exercises(nb: Any) -> dict[str, int]:
    """Exercise name -> its cell's index, in notebook order."""
    return {
        c.metadata["exercise"]: i
        for i, c in enumerate(nb.cells)
        if c.cell_type == "code" and "exercise" in c.metadata
    }


@dataclass(frozen=True)
class Role:
    """What a cell of the notebook that runs is: an exercise's cell, a check's (from the
    course), or another of the learner's (`index`: its place in the submission)."""

    kind: str  # "exercise", "check", "other"
    name: str = ""
    index: int = -1


def role_keys(roles: list[Role]) -> list[str]:
    """A name for each cell that is the same in every copy of a notebook: the exercise's, the
    k-th check of an exercise, another cell's id."""
    count: dict[str, int] = {}
    keys = []
    for r in roles:
        if r.kind == "check":
            k = count[r.name] = count.get(r.name, -1) + 1
            keys.append(f"check:{r.name}#{k}")
        else:
            keys.append(f"{r.kind}:{r.name}")
    return keys


def solutions(original: Any) -> dict[str, str]:
    """Exercise name -> the course's solution: the first ```python block of the folded
    solution that follows its cell."""
    found = {}
    for i, cell in enumerate(original.cells):
        name = cell.metadata.get("exercise") if cell.cell_type == "code" else None
        if name is None:
            continue
        for after in original.cells[i + 1 : i + 3]:
            m = re.search(r"```python\n(.*?)```", after.source, re.S)
            if after.cell_type == "markdown" and m:
                found[str(name)] = m.group(1).rstrip("\n")
                break
    return found


def with_solutions(nb: Any, answers: dict[str, str]) -> Any:
    """A copy of the notebook whose exercise cells named in `answers` hold those answers."""
    nb = copy.deepcopy(nb)
    for name, index in exercises(nb).items():
        if name in answers:
            nb.cells[index].source = answers[name]
    return nb


def without_solutions(nb: dict[str, Any]) -> dict[str, Any]:
    """A hand-out of the notebook (nbformat's dict): no folded solution cell (tagged
    "solution"), and no sentence of its text that speaks of solutions (a promise of one below
    would be false); the rest of the text as it was."""
    out = copy.deepcopy(nb)
    out["cells"] = []
    for cell in nb["cells"]:
        if "solution" in cell.get("metadata", {}).get("tags", []):
            continue
        cell = copy.deepcopy(cell)
        if cell.get("cell_type") == "markdown":
            text = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
            kept, dropped = [], False
            for paragraph in text.split("\n\n"):
                sentences = re.split(r"(?<=[.!?])\s+", paragraph)
                mine = [x for x in sentences if not re.search(r"\bsolutions?\b", x, re.I)]
                if len(mine) == len(sentences):
                    kept.append(paragraph)  # untouched: its line breaks kept
                else:
                    dropped = True
                    if mine:
                        kept.append(" ".join(" ".join(x.split("\n")) for x in mine))
            if dropped:  # else as it was, list of lines or text
                cell["source"] = "\n\n".join(kept)
        out["cells"].append(cell)
    return out


def compose(submission: Any, original: Any) -> tuple[Any, list[Role]]:
    """The notebook to run: the submission's cells, its check cells replaced by the course's.

    A course check cell takes the place of the submission's cell with the same `checks=` name
    (the first such cell for the first, and so on); where the submission has none left, it goes
    after the cell it follows in the course (found by its exercise name or cell id), else after
    its exercise. Check cells the course does not have are dropped."""
    out: list[Any] = []
    roles: list[Role] = []
    seen: dict[str, int] = {}
    for i, cell in enumerate(submission.cells):
        meta = cell.get("metadata", {})
        if cell.cell_type == "code" and "checks" in meta:
            name = str(meta["checks"])
            k = seen[name] = seen.get(name, -1) + 1
            out.append(None)  # a slot, for the course's k-th check cell of that name
            roles.append(Role("slot", f"{name}#{k}"))
        elif cell.cell_type == "code" and "exercise" in meta:
            out.append(cell)
            roles.append(Role("exercise", str(meta["exercise"]), i))
        else:
            out.append(cell)
            roles.append(Role("other", str(cell.get("id", "")), i))
    count: dict[str, int] = {}
    for j, cell in enumerate(original.cells):
        meta = cell.get("metadata", {})
        if cell.cell_type != "code" or "checks" not in meta:
            continue
        name = str(meta["checks"])
        k = count[name] = count.get(name, -1) + 1
        mine = copy.deepcopy(cell)
        role = Role("check", name)
        slot = next((n for n, r in enumerate(roles) if r == Role("slot", f"{name}#{k}")), None)
        if slot is not None:
            out[slot], roles[slot] = mine, role
            continue
        at = len(out)
        for before in reversed(original.cells[:j]):
            bm = before.get("metadata", {})
            key = (
                Role("exercise", str(bm["exercise"]), -1)
                if "exercise" in bm and before.cell_type == "code"
                else None
            )
            hits = [
                n
                for n, r in enumerate(roles)
                if r.kind != "slot"
                and (
                    (key is not None and r.kind == "exercise" and r.name == key.name)
                    or (r.kind == "other" and before.get("id") and r.name == before.get("id"))
                    or (
                        r.kind == "check"
                        and out[n] is not None
                        and out[n].get("id") == before.get("id")
                        and before.get("id")
                    )
                )
            ]
            if hits:
                at = hits[-1] + 1
                break
        out.insert(at, mine)
        roles.insert(at, role)
    keep = [n for n, r in enumerate(roles) if r.kind != "slot"]
    nb = copy.deepcopy(submission)
    nb.cells = [out[n] for n in keep]
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    return nb, [roles[n] for n in keep]


def blame(rows: list[Any], nb: Any, original: Any, attempt: Any) -> list[Any]:
    """The rows (grade's Rows) with each exercise that fails only because an earlier one is
    wrong marked `blocked` by it: `attempt(notebook)` grades the submission again with that
    earlier exercise's cell holding the course's solution (at most RERUNS times)."""
    answers = solutions(original)
    order = list(exercises(original))
    now = {r.exercise: r for r in rows if r.exercise}
    wrong = ("failed", "error", "timeout")
    replaced: dict[str, str] = {}
    for _ in range(RERUNS):
        first = next(
            (
                name
                for n, name in enumerate(order)
                if name not in replaced
                and name in now
                and now[name].result in (*wrong, "not attempted")
                and any(x in now and now[x].result in wrong for x in order[n + 1 :])
            ),
            None,
        )
        if first is None or first not in answers or first not in exercises(nb):
            break
        replaced[first] = answers[first]
        again = {r.exercise: r for r in attempt(with_solutions(nb, replaced)) if r.exercise}
        for x in order[order.index(first) + 1 :]:
            if now[x].result in wrong and again.get(x, now[x]).result in ("passed", "skipped"):
                now[x] = dataclasses.replace(
                    now[x],
                    result="blocked",
                    detail=f"blocked by {first} ({now[first].result}): it passes once "
                    f"{first} is right",
                )
    return [now.get(r.exercise, r) if r.exercise else r for r in rows]
