// The Train view's transport: its actions sent to Python, one after another, and the frames that
// come unasked, each whole again from what changed (common.js's transports carry them: the server,
// a notebook widget, the static site's worker). `post` is the one function that sends an action
// and shows its answer; the rest of the view calls it.

const PARTS = ["grid", "heat_scale", "shown", "links", "grads", "grad_max", "graph"]; // sent when changed

// `ui`: the view's shared parts (train.js's mountTrain); returns what this part offers the others.
export function transportPart(ui) {
  const { transport, view, showError, showIn } = ui;

  // What makes this run again on a server that no longer holds it (common.js's httpTransport):
  // its settings, added points included (the weights start again from the seed).
  if (transport.restorers) {
    transport.restorers.train = (action) =>
      view.meta && !["config", "options"].includes(action) ? { action: "config", body: view.meta.settings } : null;
  }

  // One call of the Train view; its answer shown; a refusal's one line in the page's error line.
  // Actions go one after another, in the order the learner made them: two in flight at once (two
  // toggles clicked in a row) could be taken in the other order, and the run end up with the first.
  let actionChain = Promise.resolve();
  async function post(action, body) {
    const call = actionChain.then(() => transport.call("train", action, body === undefined ? {} : body));
    actionChain = call.then(() => undefined, () => undefined); // the next waits for this one, either way
    let answer;
    try {
      answer = await call;
    } catch (err) {
      showError("train-error", err.message);
      throw err;
    }
    showError("train-error", view.refused ? view.refused.line : ""); // a refused link's line stays
    show(answer);
    return answer;
  }

  // What the page shows, told to Python (in order, as every action: an earlier "graph: false"
  // never undoes a later "graph: true").
  function postView(body) {
    return post("view", body).catch(showIn("train-error"));
  }

  // New settings. Two quick changes (two toggles clicked in a row) are two requests: the answer to
  // the first must not undo the second on the controls, so only the last one sets them.
  async function configure(settings) {
    view.configuring = (view.configuring || 0) + 1;
    try {
      await post("config", settings);
    } catch (e) {
      showError("train-error", e.message);
      if (view.configuring === 1) ui.settingsToControls(view.meta ? view.meta.settings : view.options.defaults); // keep the run
    } finally {
      view.configuring -= 1;
    }
  }

  function show(answer) {
    if (answer.meta) ui.setMeta(answer.meta);
    if (answer.frame) ui.setFrame(answer.frame);
    if (answer.read) ui.setRead(answer.read);
  }

  // The static site drew the untrained network from its snapshot: where Python's own answer to
  // that first config differs (the data's last bits), the view takes Python's, for the same run.
  transport.onSnapshotDiffers = (v, action, answer) => {
    if (v !== "train" || action !== "config" || !view.meta || !answer.meta ||
        answer.meta.config_id !== view.meta.config_id) return false;
    ui.setMeta(answer.meta);
    if (view.frame) ui.drawPlot();
    return true;
  };

  function connect() {
    if (view.stopFrames) view.stopFrames();
    view.stream = null;
    view.stopFrames = transport.frames((f) => { if (f.type === "frame") onStreamFrame(f); });
  }

  // A frame from the transport holds what changed since the one before it: the stream's own
  // picture is kept whole here (the answers to actions carry whole frames, drawn by their seq).
  function onStreamFrame(f) {
    if (!f.full && !view.stream) { connect(); return; } // joined a stream under way: start it over
    if (f.full) view.stream = f;
    else {
      const base = view.stream, out = Object.assign({}, base, f);
      for (const k of PARTS) if (!(k in f)) out[k] = base[k];
      if (f.heat && base.heat && f.heat.length === base.heat.length) {
        out.heat = f.heat.map((h, i) => (h === null ? base.heat[i] : h));
      }
      view.stream = out;
    }
    ui.setFrame(Object.assign({}, view.stream, { history: f.history, history_reset: f.history_reset }));
  }


  return { post, postView, configure, connect };
}
