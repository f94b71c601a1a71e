// One position's last step of the GPT view, as a program of the explorer's language (issue 42,
// item 3): the frame's attention (gpt_frames.attention) brings each position's logits, the model's
// own from the same forward pass, and its target, the character that follows. The program is
// the loss there, −log softmax(logits)[target], written out as the explorer's example "Softmax and
// cross-entropy" writes it: every logit a leaf marked data (the model's output here, not a
// parameter: the explorer labels it so), its exp, their sum
// s (in pairs), each probability p = e/s, and L = −log p of the target; each logit's grad is then
// p − y.
// The numbers are written as JavaScript's shortest round-trip text (String(x)), which Python
// reads back as the very same floats: the explorer computes with the frame's numbers exactly.
// Free of the page (no DOM): gpt.js links to it, and a test runs it in Node.

// Characters written as a word where a name cannot hold them.
const WORDS = { ".": "dot", "-": "hyphen", "'": "apostrophe" };

// What a character is called in the program's names: itself where a Python name can hold it and
// reads it unchanged (an ASCII letter or digit, or a letter that NFKC leaves as it is: Python
// normalizes names, and ſ would become s), a word for the punctuation, else its code point.
export function charName(ch, isBos) {
  if (isBos) return "BOS"; // the start-and-end token (the page writes it "."): the word ends
  if (/^[A-Za-z0-9]$/.test(ch)) return ch;
  if (WORDS[ch]) return WORDS[ch];
  if (/^\p{L}$/u.test(ch) && ch.normalize("NFKC") === ch) return ch;
  return `u${ch.codePointAt(0).toString(16).padStart(4, "0")}`;
}

// Each id's name in the program (`vocab`: each id's character; the last is BOS).
export function charNames(vocab) {
  return vocab.map((ch, i) => charName(ch, i === vocab.length - 1));
}

// `items` joined by "; ", `perLine` to a line.
function lines(items, perLine) {
  const out = [];
  for (let i = 0; i < items.length; i += perLine) out.push(items.slice(i, i + perLine).join("; "));
  return out.join("\n");
}

// The sum of `terms`, added in pairs, then pairs of pairs: a graph log₂(n) additions deep, where a
// + b + c + ... would be a staircase n − 1 deep, as wide on the screen as the vocabulary is long.
function pairwise(terms) {
  if (terms.length === 1) return terms[0];
  const half = Math.ceil(terms.length / 2);
  const side = (t) => (t.length === 1 ? t[0] : `(${pairwise(t)})`);
  return `${side(terms.slice(0, half))} + ${side(terms.slice(half))}`;
}

// The program of position `pos` of `attention` (a frame's): its loss, each logit a leaf.
export function lossProgram(attention, pos) {
  const { word, labels, logits, targets, vocab } = attention;
  if (!logits || !(pos >= 0 && pos < logits.length)) {
    throw new Error(`the word ${JSON.stringify(word)} has no position ${pos}`);
  }
  const names = charNames(vocab);
  const z = logits[pos];
  const bad = z.findIndex((x) => typeof x !== "number" || !Number.isFinite(x));
  if (bad >= 0) throw new Error(`position ${pos}'s logit of ${JSON.stringify(vocab[bad])} is ${z[bad]}: the model has diverged`);
  const t = names[targets[pos]];
  const read = labels.slice(0, pos + 1).join("");
  const next = targets[pos] === vocab.length - 1 ? "the end of the word (BOS)" : `'${vocab[targets[pos]]}'`;
  return [
    `# ${JSON.stringify(word)}, position ${pos}: having read "${read}", the GPT's logits for the next character (its own numbers), then its loss; the target: ${next}`,
    lines(names.map((n, i) => `logit_${n}: data = ${String(z[i])}`), 3),
    lines(names.map((n) => `e_${n} = exp(logit_${n})`), 6),
    `s = ${pairwise(names.map((n) => `e_${n}`))}  # their sum, added in pairs`,
    lines(names.map((n) => `p_${n} = e_${n}/s`), 6) + "  # softmax: the probabilities",
    `L = -log(p_${t})  # cross-entropy: each logit's grad is p − y (y = 1 for ${t}, else 0)`,
  ].join("\n");
}

// The explorer's address with `program` (url-state.js: its fragment's "program"), relative to a
// page beside it (the server's /gpt and the site's gpt.html both have the explorer at ./).
export function explorerHref(program) {
  return `./#${new URLSearchParams({ program }).toString()}`;
}
