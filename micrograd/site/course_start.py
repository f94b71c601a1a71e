"""The course's start page in the static site, ``OUT/course/start.html``: where the site's "Learn"
link lands. The chapters in order (`CHAPTERS`: one entry a chapter, its notebook's file, the
number it is shown under, and what the learner does in it), each with its title (read from the
notebook's first cell) and that line, "Start here" on the first; each opens in JupyterLite's
single-document notebook view (``notebooks/index.html?path=...``: readable on a phone),
JupyterLab one click away. It says once where work is kept (this browser) and offers "Download
my work" (course/download.js: every notebook of the learner's in one archive named for them, to
hand in).
"""

from __future__ import annotations

import html
import json
import pathlib
import re
from typing import NamedTuple


class Chapter(NamedTuple):
    """A chapter of the course, as the start page lists it."""

    name: str  # its notebook, NAME.ipynb: kept as it is (learners' saved work, grading use it)
    number: str  # the number it is shown under, in order
    does: str  # what the learner does in it, one line


# The course, in order: a chapter is one entry here (course_app.NOTEBOOKS is read from it)
CHAPTERS = (
    Chapter(
        "01_derivatives_and_value",
        "1",
        "Measure a slope by nudging x, write a Value that remembers how it was made, and work "
        "out each gradient of the lecture's expression by hand.",
    ),
    Chapter(
        "02_backpropagation",
        "2",
        "Backpropagate through a neuron by hand, give each op its _backward, write backward(), "
        "break it on purpose, and keep your Value in a file of your own.",
    ),
    Chapter(
        "03_neuron_to_mlp",
        "3",
        "Build a Neuron, a Layer and an MLP on your own Value, write the training step, and "
        "train a network on four examples.",
    ),
    Chapter(
        "04_moons_demo",
        "4",
        "Write the hinge loss, L2 regularization and the learning-rate decay, then train "
        "karpathy's moons demo to 100% on your network.",
    ),
    Chapter(
        "05_pytorch_side_by_side",
        "5",
        "Run your network next to PyTorch's and write tanh as a PyTorch Function, forward and "
        "backward, checked against gradcheck.",
    ),
    Chapter(
        "06_appendix_second_derivatives_and_jit",
        "6",
        "Read on beyond the lecture: the gradient of a gradient, Newton's method, and "
        "micrograd.jit compiling a graph (nothing to fill in).",
    ),
    Chapter(
        "07_names_and_the_next_character",
        "7",
        "Write softmax, cross-entropy and a name's loss, then train a network that predicts the "
        "next character of a name and invents new names.",
    ),
    Chapter(
        "08_attention_and_the_gpt",
        "8",
        "Write RMSNorm and an attention head, assemble microgpt's GPT from them, train it on "
        "names and sample from it.",
    ),
    Chapter(
        "09_why_isnt_it_learning",
        "9",
        "Measure a layer's saturated units and the update:data ratio, diagnose three networks "
        "that do not learn, and fix their init with Kaiming's scale.",
    ),
)

PAGE = "start.html"  # in course/: its index.html is the app's, where its pages read their config
CSS = """
body { font: 16px/1.5 system-ui, sans-serif; margin: 0; color: #1f2328; background: #fff; }
main { max-width: 46rem; margin: 0 auto; padding: 1.5rem 1rem 3rem; }
h1 { font-size: 1.6rem; margin: 0 0 .25rem; }
.lead { color: #59636e; margin: 0 0 1.25rem; }
ol { list-style: none; padding: 0; margin: 0; }
li { border: 1px solid #d1d9e0; border-radius: 8px; margin: 0 0 .75rem; }
li a.open { display: block; padding: .8rem 1rem; color: inherit; text-decoration: none;
  min-height: 44px; box-sizing: border-box; }
li a.open:hover, li a.open:focus { background: #f6f8fa; border-radius: 8px; }
.title { font-weight: 600; color: #0969da; }
.line { display: block; color: #59636e; font-size: .95rem; }
.start { display: inline-block; background: #1a7f37; color: #fff; font-size: .8rem;
  font-weight: 600; border-radius: 1rem; padding: .05rem .6rem; margin-left: .4rem; }
.lab { display: block; padding: 0 1rem .6rem; font-size: .85rem; }
.note { margin-top: 1.5rem; font-size: .9rem; color: #59636e; }
.download { display: inline-block; background: #0969da; color: #fff; font-weight: 600;
  border-radius: 6px; padding: .55rem .9rem; min-height: 44px; box-sizing: border-box;
  text-decoration: none; margin: 0 .5rem .25rem 0; }
.hand-in { margin: 0 0 1.25rem; color: #59636e; font-size: .95rem; }
a { color: #0969da; }
"""


def chapter(nb: dict) -> tuple[str, str]:
    """A notebook's title (its first heading) and one line (the first sentence after it)."""
    first = "".join(next(c for c in nb["cells"] if c["cell_type"] == "markdown")["source"])
    lines = first.splitlines()
    title = next(ln for ln in lines if ln.startswith("# "))[2:].strip()
    rest = " ".join(ln.strip() for ln in lines[lines.index("# " + title) + 1 :] if ln.strip())
    plain = re.sub(r"[*`]", "", rest)
    return re.sub(r"[*`]", "", title), re.split(r"(?<=[.!?])\s+(?=[A-Z])", plain, maxsplit=1)[0]


def numbered(number: str, title: str) -> str:
    """A chapter's title under its number: "6. Appendix: …" (a title already numbered so, as
    "1. Derivatives, …" is, stays as it is)."""
    return title if title.startswith(f"{number}. ") else f"{number}. {title}"


def start_page(
    notebooks: pathlib.Path, title: str, chapters: tuple[Chapter, ...] = CHAPTERS
) -> bytes:
    """The start page's HTML for the course's `chapters` (their notebooks in `notebooks`)."""
    items = []
    for i, (name, number, line) in enumerate(chapters):
        nb = json.loads((notebooks / f"{name}.ipynb").read_text("utf-8"))
        head = numbered(number, chapter(nb)[0])
        path = html.escape(f"{name}.ipynb", quote=True)
        start = ' <span class="start">Start here</span>' if i == 0 else ""
        items.append(
            f'<li><a class="open" href="notebooks/index.html?path={path}">'
            f'<span class="title">{html.escape(head)}</span>{start}'
            f'<span class="line">{html.escape(line)}</span></a>'
            f'<a class="lab" href="lab/index.html?path={path}">or open it in JupyterLab</a></li>'
        )
    page = f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{html.escape(title)}</title>
<link rel="icon" href="lab/favicon.ico">
<style>{CSS}</style></head>
<body><main>
<p><a href="../index.html">← micrograd</a></p>
<h1>The course</h1>
<p class="lead">Karpathy's micrograd lecture as notebooks you fill in, running here in your browser
(Python in WebAssembly: nothing to install). One chapter at a time, in order.</p>
<p class="hand-in"><a class="download" href="#download-my-work">Download my work</a>
<span>your notebooks as you left them, in one archive named for you: to hand in.</span></p>
<ol>
{"".join(items)}
</ol>
<p class="note">Your work is kept in this browser (its storage for this site), saved as you type.
"Download my work" (above) takes all of it in one archive named for you, to hand in. Another
browser, or clearing this site's data, starts from a fresh copy.
<a href="lab/index.html">All the files in JupyterLab</a>.</p>
<script type="module" src="download.js"></script>
</main></body></html>
"""
    return page.encode("utf-8")
