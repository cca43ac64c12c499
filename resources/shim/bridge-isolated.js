// Helm's side of the extension bridge. Runs in an isolated JavaScript world of the main frame,
// at document creation, after qwebchannel.js. Page scripts cannot see this world: they reach
// Helm only through a private, detached DOM node shared with helm-main.js below, and every call
// that arrives on it is sent to the bridge object of this frame's own channel, which knows who
// is calling. Events on a detached node reach only listeners on that node, and are dispatched
// synchronously, so a call costs no extra task hop in either direction.
(function () {
  'use strict';
  var node = document.createElement('helm-bridge');
  var bridge = null;
  var queued = [];
  var waiting = new Map();
  var next = 0;
  var handed = false;

  // Both scripts run before any page script, in an order Helm does not control: whichever
  // runs second completes the hand-over, and the acknowledgement disarms it for good.
  function handOver() {
    if (handed) return;
    document.dispatchEvent(new FocusEvent('helm:node', { relatedTarget: node }));
  }
  function acknowledged() {
    handed = true;
    document.removeEventListener('helm:ready', handOver);
  }
  document.addEventListener('helm:ready', handOver);
  node.addEventListener('helm:ack', acknowledged, { once: true });

  // The calls a page makes in one go (200 in one Promise.all) cross to Helm as one message: they
  // are gathered until this task's script ends (a microtask) and sent together, a batch at most
  // MAX_BATCH calls and about one call's worth of text long. A call made alone goes alone.
  var MAX_BATCH = __HELM_MAX_BATCH_CALLS__;
  var outbox = [];
  var outboxChars = 0;
  function flush() {
    var calls = outbox;
    outbox = [];
    outboxChars = 0;
    if (calls.length === 1) {
      var call = calls[0];
      bridge.call(call[0], call[1], call[2], call[3]);
    } else if (calls.length > 1) {
      bridge.callMany(calls);
    }
  }
  function send(call) {
    if (outbox.length === 0) queueMicrotask(flush);
    outbox.push(call);
    outboxChars += call[3].length;
    if (outbox.length >= MAX_BATCH || outboxChars > MAX_ARGS) flush();
  }

  // Helm takes in no more of a call than it could accept: anything longer is cut here, one
  // character past the limit, in a world the page cannot reach. Helm then answers the call
  // (too_large, or refused for a name) without ever holding the rest, and counts it against
  // the rate limit like any other. (Helm fills in its limits when it loads this script.)
  var MAX_NAME = __HELM_MAX_NAME_CHARS__;
  var MAX_ARGS = __HELM_MAX_CALL_CHARS__;
  function cut(value, limit) {
    var text = String(value);
    return text.length > limit ? text.slice(0, limit + 1) : text;
  }

  // detail: [page id, connection, operation, args as JSON text]
  node.addEventListener('helm:call', function (event) {
    var message = event.detail;
    if (!Array.isArray(message) || message.length !== 4) return;
    next += 1;
    var id = String(next);
    waiting.set(id, String(message[0]));
    var call = [id, cut(message[1], MAX_NAME), cut(message[2], MAX_NAME), cut(message[3], MAX_ARGS)];
    if (bridge === null) queued.push(call); else send(call);
  });

  function answer(id, text) {
    if (!waiting.has(id)) return;
    var pageId = waiting.get(id);
    waiting.delete(id);
    node.dispatchEvent(new CustomEvent('helm:result', { detail: pageId + ':' + text }));
  }

  new QWebChannel(qt.webChannelTransport, function (webChannel) {
    bridge = webChannel.objects.helm;
    bridge.done.connect(answer);
    // The answers Helm had at once for a batch, in one message: [[id, text], ...].
    bridge.doneMany.connect(function (answers) {
      if (!Array.isArray(answers)) return;
      answers.forEach(function (pair) {
        if (Array.isArray(pair) && pair.length === 2) answer(String(pair[0]), String(pair[1]));
      });
    });
    queued.splice(0).forEach(send);
    bridge.ready();
  });

  handOver();
})();
