// Helm's part of an MCP App's own frame: in the app's world, before any script of the app's.
// A window message between the app's sandboxed frame and its host page costs the engine
// milliseconds; a message over a MessagePort between them, microseconds. So the frame asks the
// host page for a port once, and from then on the app's `window.parent` is a port:
// `window.parent.postMessage(message, '*')` sends over it, and what Helm sends arrives as the
// window's own message events, from `window.parent` (the source the ext-apps SDK accepts).
// The host page takes what comes over the port exactly as a message the frame posted, with the
// same checks; a message posted to the real parent (`window.top`) still arrives. Until the port
// has come, messages wait here in order, each copied when it was posted, as postMessage does.
// The request names this document (a word of its own), and only the port sent back with that
// word is taken: one meant for the frame's earlier document (a reload) is not.
(function () {
  'use strict';
  // The app's document only: not the host page, nor the frame's first, empty document.
  if (window.top === window || window.parent !== window.top || location.protocol === 'about:') return;
  var word = Math.random().toString(36).slice(2, 12);
  var ASK = '%PORT_ASK%' + word;
  var GIVE = '%PORT_GIVE%' + word;
  var host = window.parent;
  var send = MessagePort.prototype.postMessage;
  var dispatch = EventTarget.prototype.dispatchEvent;
  var copy = structuredClone;
  var Message = MessageEvent;
  var parent = new MessageChannel().port1; // a valid message source, never started
  var port = null;
  var waiting = [];
  var origin = '';

  Object.defineProperty(parent, 'postMessage', {
    value: function postMessage(message) {
      if (port === null) waiting.push(copy(message));
      else send.call(port, message);
    },
  });

  function arrive(data, ports) {
    var init = { data: data, origin: origin, source: parent, ports: ports };
    dispatch.call(window, new Message('message', init));
  }

  window.addEventListener('message', function (event) {
    if (event.source !== host) return;
    event.stopImmediatePropagation();
    origin = event.origin;
    if (event.data === GIVE && event.ports.length === 1) {
      port = event.ports[0];
      port.onmessage = function (e) { arrive(e.data, []); };
      waiting.splice(0).forEach(function (message) { send.call(port, message); });
    } else {
      arrive(event.data, Array.prototype.slice.call(event.ports));
    }
  }, true);

  // `parent` is replaceable: the page's own property now, for every script after this one.
  Object.defineProperty(window, 'parent', { value: parent, configurable: true, enumerable: true });
  host.postMessage(ASK, '*');
})();
