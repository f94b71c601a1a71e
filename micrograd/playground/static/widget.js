// The notebook widget's entry (anywidget's render): the playground's own view, in a shadow root
// of its own (its ids and CSS apart from the notebook's and from other widgets'), talking to the
// kernel through the widget's messages. The pages' own modules: micrograd/playground/serving/widgets.py
// joins them and this file into the widget's one module (anywidget loads a single module, which
// cannot import files beside it), their imports and exports taken out.

import { widgetTransport } from "./common.js";
import { mountExplorer } from "./explorer/explorer.js";
import { mountGPT } from "./gpt/gpt.js";
import { mountTrain } from "./train/train.js";

export default {
  render({ model, el }) {
    const host = document.createElement("div");
    host.className = "micrograd-widget";
    el.appendChild(host);
    const root = host.attachShadow({ mode: "open" });
    const style = document.createElement("style");
    style.textContent = model.get("_page_css");
    const page = document.createElement("div");
    page.className = "mg-root";
    page.innerHTML = model.get("_page_html");
    // what to say once the kernel is gone: one line above the view, whose controls then rest
    const lost = Object.assign(document.createElement("p"), { className: "boot error", hidden: true });
    lost.setAttribute("role", "alert");
    root.append(style, lost, page);
    // JupyterLab's theme, light or dark, as it is and as it changes (Settings > Theme)
    const theme = () => page.classList.toggle("dark", document.body.dataset.jpThemeLight === "false");
    theme();
    const watchTheme = new MutationObserver(theme);
    watchTheme.observe(document.body, { attributes: true, attributeFilter: ["data-jp-theme-light"] });
    // What is typed into the view's own boxes is the view's: JupyterLab's shortcuts (Enter: edit
    // the cell) are off while one of them has the focus, so Enter checks "your c.grad" there too.
    root.addEventListener("focusin", (ev) => {
      host.toggleAttribute("data-lm-suppress-shortcuts", ev.target.matches("input[type=text], textarea"));
    });
    root.addEventListener("focusout", () => host.removeAttribute("data-lm-suppress-shortcuts"));
    const transport = widgetTransport(model);
    const mount = { explorer: mountExplorer, train: mountTrain, gpt: mountGPT }[model.get("_view")];
    const mounted = mount(root, transport, { start: "current" });
    transport.onFail((message) => {
      lost.textContent = message;
      lost.hidden = false;
      // said once, above the view: not again by a control's own error line (the call that
      // found the kernel gone, or one still waiting, rejects with the same line)
      host.dataset.lost = message;
      for (const el of page.querySelectorAll(".error")) {
        if (el.textContent === message) { el.textContent = ""; el.hidden = true; }
      }
      const main = page.querySelector("main");
      if (main) main.inert = true;
      mounted.stop();
    });
    return () => {
      watchTheme.disconnect();
      mounted.stop();
      transport.close();
    };
  },
};
