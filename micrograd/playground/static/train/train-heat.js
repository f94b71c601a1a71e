// The Train view's colours and pictures, free of any page: the classes' and the gradients' colours,
// a heat map's bytes as an image (a neuron's output over the plane, the output's regions), and the
// colour legends under them. train-plot.js and train-net.js draw with them.

export const COLORS = [[245, 147, 34], [8, 119, 189], [58, 166, 85]]; // class 0 orange, 1 blue, 2 green
export const GRAD_COLORS = [[19, 141, 117], [192, 57, 43]]; // ∂L/∂w < 0 teal, > 0 red (the page's grad colour)

export function decode(b64) {
  const s = atob(b64);
  const out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
  return out;
}

export function mix(c, t) { // white -> colour c by t in [0, 1]
  return c.map((v) => Math.round(255 + (v - 255) * t));
}

// A number x in [-1, 1] as a colour: white at 0, blue (+) or orange (-) as strong as |x|·strength
// (`pair`: another two colours, [negative, positive]).
export function signColor(x, strength, pair = [COLORS[0], COLORS[1]]) {
  return mix(x >= 0 ? pair[1] : pair[0], strength * Math.min(1, Math.abs(x)));
}

export const HEAT_STRENGTH = 0.85; // a neuron's heat map, a regression's output
export const REGION_STRENGTH = 0.65; // the decision regions: paler, so the points stand out

// A heat map's 256 shades (byte 0: -1, orange; 255: +1, blue) as RGBA words, made once: a pixel
// is then one array write (a 6x32 network draws 192 maps a frame).
const HEAT = (() => {
  const lut = new Uint32Array(256), bytes = new Uint8Array(lut.buffer);
  for (let v = 0; v < 256; v++) {
    const rgb = signColor(v / 127.5 - 1, HEAT_STRENGTH);
    bytes.set([rgb[0], rgb[1], rgb[2], 255], 4 * v);
  }
  return lut;
})();

// The big plot's picture of a frame's grid (only: one class's region), made once per grid: the

export function makeRegionImage(grid, side, only, hard) {
  if (grid.kind === "value") return heatImage(grid.b64, side); // a regression: the output itself
  const img = new ImageData(side, side);
  const v = decode(grid.b64);
  const cls = grid.kind === "classes" ? decode(grid.cls) : null;
  for (let i = 0; i < side * side; i++) {
    let rgb;
    if (cls && only !== null) {
      rgb = cls[i] === only ? mix(COLORS[only], hard ? 0.6 : 0.3 + 0.6 * (v[i] / 255)) : [255, 255, 255];
    } else if (cls) {
      rgb = mix(COLORS[cls[i]], hard ? 0.45 : 0.25 + 0.45 * (v[i] / 255));
    } else {
      const x = v[i] / 127.5 - 1;
      rgb = hard ? signColor(x >= 0 ? 1 : -1, 0.5) : signColor(x, REGION_STRENGTH);
    }
    img.data.set([rgb[0], rgb[1], rgb[2], 255], 4 * i);
  }
  return img;
}

// A scale's number, short: 3 significant digits, a true minus sign, + for the positive end.
export function tick(x, plus = false) {
  const t = x === 0 ? "0" : String(Number(Math.abs(x).toPrecision(3)));
  return x < 0 ? `−${t}` : plus && x > 0 ? `+${t}` : t;
}

// A colour legend in the element `el`: `title`, a bar of the colours colorAt(t) for t from 0 to 1,
// and ticks [t, label] under it. Text, so that it reads as it looks.
export function setLegend(el, title, colorAt, ticks) {
  const key = JSON.stringify([title, ticks, colorAt(0), colorAt(0.5), colorAt(1)]);
  if (el.dataset.key === key) return; // the same legend: leave the page alone
  el.dataset.key = key;
  el.textContent = "";
  const stops = Array.from({ length: 21 }, (_, k) => `rgb(${colorAt(k / 20)}) ${5 * k}%`);
  const bar = Object.assign(document.createElement("span"), { className: "lg-bar" });
  bar.style.background = `linear-gradient(to right, ${stops.join(", ")})`;
  const marks = Object.assign(document.createElement("span"), { className: "lg-ticks" });
  for (const [t, label] of ticks) {
    const m = Object.assign(document.createElement("span"), { textContent: label });
    m.style.left = `${100 * t}%`;
    if (t <= 0) m.className = "first"; else if (t >= 1) m.className = "last";
    marks.append(m);
  }
  const scale = Object.assign(document.createElement("span"), { className: "lg-scale" });
  scale.append(bar, marks);
  el.append(Object.assign(document.createElement("span"), { className: "lg-title", textContent: title }), scale);
}


// One neuron's output over the plane (`side` x `side` bytes, -1 orange .. +1 blue) as an image.
export function heatImage(b64, side) {
  const img = new ImageData(side, side), v = decode(b64), px = new Uint32Array(img.data.buffer);
  for (let k = 0; k < side * side; k++) px[k] = HEAT[v[k]];
  return img;
}

