// The notebook widget's entry (anywidget's render): the playground's own view, in a shadow root
// of its own (its ids and CSS apart from the notebook's and from other widgets'), talking to the
// kernel through the widget's messages. micrograd/widgets.py joins common.js, explorer.js,
// train.js and this file into the widget's one module: the same files the pages load.

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
    const transport = widgetTransport(model);
    const mount = model.get("_view") === "train" ? mountTrain : mountExplorer;
    const mounted = mount(root, transport, { start: "current" });
    transport.onFail((message) => {
      lost.textContent = message;
      lost.hidden = false;
      const main = page.querySelector("main");
      if (main) main.inert = true;
      mounted.stop();
    });
    return () => {
      mounted.stop();
      transport.close();
    };
  },
};
