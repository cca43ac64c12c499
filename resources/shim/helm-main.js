// The page's view of Helm: a frozen `window.helm` with one function, `call`.
// Runs in the page's own world at document creation, before any page script, so it can keep
// private references to everything it uses; a page that later replaces built-ins
// (MessagePort.prototype.postMessage, JSON.parse, Promise…) cannot reach the port this way.
(function () {
  'use strict';
  var apply = Reflect.apply;
  var parse = JSON.parse;
  var stringify = JSON.stringify;
  var PromiseCtor = Promise;
  var TypeErrorCtor = TypeError;
  var postMessage = MessagePort.prototype.postMessage;
  var eventData = Object.getOwnPropertyDescriptor(MessageEvent.prototype, 'data').get;
  var eventPorts = Object.getOwnPropertyDescriptor(MessageEvent.prototype, 'ports').get;
  var pending = Object.create(null);
  var port = null;
  var next = 0;

  function settle(event) {
    var message = apply(eventData, event, []);
    var entry = pending[message.id];
    if (entry === undefined) return;
    delete pending[message.id];
    var value;
    try {
      value = parse(message.text);
    } catch (e) {
      entry[1](new TypeErrorCtor('helm.call: Helm sent a result that is not JSON'));
      return;
    }
    entry[0](value);
  }

  function receivePort(event) {
    if (port !== null) return;
    var ports = apply(eventPorts, event, []);
    if (!ports || ports.length !== 1) return;
    port = ports[0];
    port.onmessage = settle;
    document.removeEventListener('helm:port', receivePort);
    document.dispatchEvent(new Event('helm:ack'));
  }
  document.addEventListener('helm:port', receivePort);
  document.dispatchEvent(new Event('helm:ready'));

  function call(connection, operation, args) {
    return new PromiseCtor(function (resolve, reject) {
      if (typeof connection !== 'string' || typeof operation !== 'string') {
        reject(new TypeErrorCtor('helm.call(connection, operation, args): connection and operation must be strings'));
        return;
      }
      var text;
      try {
        text = stringify(args === undefined ? {} : args);
      } catch (e) {
        text = undefined;
      }
      if (typeof text !== 'string') {
        reject(new TypeErrorCtor('helm.call: args must be a JSON value'));
        return;
      }
      if (port === null) {
        reject(new TypeErrorCtor('helm.call: Helm is not available in this frame'));
        return;
      }
      next += 1;
      pending[next] = [resolve, reject];
      apply(postMessage, port, [{ id: next, connection: connection, operation: operation, args: text }]);
    });
  }

  Object.defineProperty(window, 'helm', {
    value: Object.freeze({ call: call }),
    writable: false,
    configurable: false,
    enumerable: true
  });
})();
