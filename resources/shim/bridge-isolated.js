// Helm's side of the extension bridge. Runs in an isolated JavaScript world of the main frame,
// at document creation, after qwebchannel.js. Page scripts cannot see this world: they reach
// Helm only through the MessagePort handed to helm-main.js below, and every call that arrives
// on it is sent to the bridge object of this frame's own channel, which knows who is calling.
(function () {
  'use strict';
  var channel = new MessageChannel();
  var toPage = channel.port1;
  var bridge = null;
  var queued = [];
  var waiting = new Map();
  var next = 0;
  var handed = false;

  // Both scripts run before any page script, in an order Helm does not control: whichever
  // runs second completes the hand-over, and the acknowledgement disarms it for good.
  function handOver() {
    if (handed) return;
    document.dispatchEvent(new MessageEvent('helm:port', { ports: [channel.port2] }));
  }
  function acknowledged() {
    handed = true;
    document.removeEventListener('helm:ready', handOver);
  }
  document.addEventListener('helm:ready', handOver);
  document.addEventListener('helm:ack', acknowledged, { once: true });

  function send(call) {
    bridge.call(call[0], call[1], call[2], call[3]);
  }

  toPage.onmessage = function (event) {
    var message = event.data;
    if (message === null || typeof message !== 'object') return;
    next += 1;
    var id = String(next);
    waiting.set(id, message.id);
    var call = [id, String(message.connection), String(message.operation), String(message.args)];
    if (bridge === null) queued.push(call); else send(call);
  };

  new QWebChannel(qt.webChannelTransport, function (webChannel) {
    bridge = webChannel.objects.helm;
    bridge.done.connect(function (id, text) {
      if (!waiting.has(id)) return;
      var pageId = waiting.get(id);
      waiting.delete(id);
      toPage.postMessage({ id: pageId, text: text });
    });
    queued.splice(0).forEach(send);
    bridge.ready();
  });

  handOver();
})();
