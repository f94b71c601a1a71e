// The Train view's downloads: the model as micrograd.io writes it, and the plot as a picture with
// its run's settings and figures written under it. `ui`: the view's shared parts (train.js).

function saveBlob(blob, name) {
  const a = Object.assign(document.createElement("a"), { href: URL.createObjectURL(blob), download: name });
  document.body.append(a); // the document's own body: a download link needs to be in it
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 10000);
}

export async function downloadModel(ui) {
  const model = await ui.post("model");
  saveBlob(new Blob([JSON.stringify(model, null, 1)], { type: "application/json" }), "micrograd-model.json");
}

export function downloadPicture(ui) {
  const { $, view } = ui;
  const src = $("plot"), c = document.createElement("canvas");
  c.width = src.width; c.height = src.height + 28;
  const ctx = c.getContext("2d");
  ctx.fillStyle = "#fff"; ctx.fillRect(0, 0, c.width, c.height);
  ctx.drawImage(src, 0, 0);
  ctx.fillStyle = "#1d2430"; ctx.font = "13px sans-serif";
  const s = view.meta.settings;
  ctx.fillText(`${s.dataset}, MLP ${view.meta.sizes.join("-")} ${s.activation}, ${$("step-count").textContent}, ${$("loss-text").textContent}, ${$("acc-text").textContent}`, 6, src.height + 19);
  c.toBlob((blob) => saveBlob(blob, "micrograd-playground.png"), "image/png");
}
