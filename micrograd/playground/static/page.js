// A playground page: picks its transport (the server, or micrograd in a Web Worker on the static
// site) and mounts its view on the whole document.
"use strict";

(function boot() {
  const status = document.getElementById("boot");
  // How the start-up goes (the static site: Python takes seconds to start); -1: it failed.
  function onProgress(text, fraction) {
    status.hidden = fraction === 1;
    status.textContent = text;
    status.classList.toggle("error", fraction === -1);
    if (fraction === -1) status.setAttribute("role", "alert");
  }
  let transport;
  try {
    transport = pageTransport(onProgress);
  } catch (err) {
    onProgress(err.message, -1);
    return;
  }
  if (document.body.dataset.view === "train") {
    window.trainView = mountTrain(document, transport, { page: true }).handle;
  } else {
    mountExplorer(document, transport, { page: true });
  }
})();
