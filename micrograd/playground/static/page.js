// A playground page: picks its transport (the server, or micrograd in a Web Worker on the static
// site) and mounts its view on the whole document. An ES module: it imports the view the page
// shows (its <body data-view>), and only that one.

import { pageTransport } from "./common.js";

// Framed by another site, which could trick the learner into clicking in it: the server's pages
// say frame-ancestors 'self', which a static host (the static site) cannot send, so the page
// itself declines to run there, and says so.
function framedByAnotherSite() {
  if (window.top === window.self) return false;
  try {
    return window.top.location.origin !== location.origin;
  } catch { // another origin's window: reading its location is refused
    return true;
  }
}

(async function boot() {
  const status = document.getElementById("boot");
  if (framedByAnotherSite()) {
    document.querySelector("main").remove();
    status.hidden = false;
    status.textContent = "The micrograd playground does not run inside another site's page: open it on its own. ";
    const link = Object.assign(document.createElement("a"), { href: location.href, target: "_blank", rel: "noopener", textContent: "Open it" });
    status.append(link);
    return;
  }
  // How the start-up goes (the static site: Python takes seconds to start, a first visit on a slow
  // network many); -1: it failed. Until it is ready the page's controls are inert (what a learner
  // typed or pressed would be lost), and the step under way counts its seconds, so a long
  // download does not look like a page that hangs.
  const main = document.querySelector("main");
  let ticking = null;
  function onProgress(text, fraction) {
    clearInterval(ticking);
    const starting = fraction >= 0 && fraction < 1;
    main.inert = starting;
    status.hidden = fraction === 1;
    status.textContent = text;
    status.classList.toggle("error", fraction === -1);
    if (fraction === -1) status.setAttribute("role", "alert");
    if (starting) { // the seconds are for the eye: a screen reader is told each step once
      const since = Date.now();
      const clock = Object.assign(document.createElement("span"), { className: "elapsed" });
      clock.setAttribute("aria-hidden", "true");
      status.append(" ", clock);
      ticking = setInterval(() => { clock.textContent = `${Math.round((Date.now() - since) / 1000)} s`; }, 1000);
    }
  }
  let transport;
  try {
    transport = pageTransport(onProgress);
  } catch (err) {
    onProgress(err.message, -1);
    return;
  }
  window.playgroundTransport = transport; // for tests and the curious (its .snapshot on the site)
  if (document.body.dataset.view === "gpt") {
    const { mountGPT } = await import("./gpt/gpt.js");
    window.gptView = mountGPT(document, transport, { page: true }).handle;
  } else if (document.body.dataset.view === "train") {
    const { mountTrain } = await import("./train/train.js");
    window.trainView = mountTrain(document, transport, { page: true }).handle;
  } else {
    const { mountExplorer } = await import("./explorer/explorer.js");
    mountExplorer(document, transport, { page: true });
  }
})().catch((err) => { // a module that failed to load: the page says it in one line
  const status = document.getElementById("boot");
  status.hidden = false;
  status.classList.add("error");
  status.setAttribute("role", "alert");
  status.textContent = `The playground could not start: ${err.message}`;
});
