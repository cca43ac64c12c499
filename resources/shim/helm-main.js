// The page's view of Helm: a frozen `window.helm` with `call`, `state` and `orchestrate`.
// Runs in the page's own world at document creation, before any page script, so it keeps
// private references to everything it uses. A page that later replaces built-ins
// (EventTarget.prototype.dispatchEvent, the CustomEvent detail getter, JSON.parse, Promise…)
// never sees the private node those would otherwise be handed as `this`.
(function () {
  'use strict';
  var apply = Reflect.apply;
  var parse = JSON.parse;
  var stringify = JSON.stringify;
  var PromiseCtor = Promise;
  var TypeErrorCtor = TypeError;
  var CustomEventCtor = CustomEvent;
  var EventCtor = Event;
  var StringCtor = String;
  var dispatch = EventTarget.prototype.dispatchEvent;
  var listen = EventTarget.prototype.addEventListener;
  var indexOf = String.prototype.indexOf;
  var slice = String.prototype.slice;
  var eventDetail = Object.getOwnPropertyDescriptor(CustomEvent.prototype, 'detail').get;
  var relatedTarget = Object.getOwnPropertyDescriptor(FocusEvent.prototype, 'relatedTarget').get;
  var pending = Object.create(null);
  var node = null;
  var next = 0;

  function settle(event) {
    var detail = apply(eventDetail, event, []);
    if (typeof detail !== 'string') return;
    var colon = apply(indexOf, detail, [':']);
    var id = apply(slice, detail, [0, colon]);
    var entry = pending[id];
    if (entry === undefined) return;
    delete pending[id];
    var value;
    try {
      value = parse(apply(slice, detail, [colon + 1]));
    } catch (e) {
      entry[1](new TypeErrorCtor('helm.call: Helm sent a result that is not JSON'));
      return;
    }
    entry[0](value);
  }

  function receiveNode(event) {
    if (node !== null) return;
    var target = apply(relatedTarget, event, []);
    if (!target) return;
    node = target;
    apply(listen, node, ['helm:result', settle]);
    document.removeEventListener('helm:node', receiveNode);
    apply(dispatch, node, [new EventCtor('helm:ack')]);
  }
  document.addEventListener('helm:node', receiveNode);
  document.dispatchEvent(new EventCtor('helm:ready'));

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
      if (node === null) {
        reject(new TypeErrorCtor('helm.call: Helm is not available in this frame'));
        return;
      }
      next += 1;
      var id = StringCtor(next);
      pending[id] = [resolve, reject];
      apply(dispatch, node, [new CustomEventCtor('helm:call', { detail: [id, connection, operation, text] })]);
    });
  }

  // Helm denies every permission, but the engine never asks it about location (the request
  // would stay pending for ever): answer location requests here, as denied.
  if (typeof Geolocation === 'function') {
    var denied = function (error) {
      if (typeof error !== 'function') return;
      setTimeout(function () {
        error({ code: 1, message: 'Helm extensions have no access to the location',
                PERMISSION_DENIED: 1, POSITION_UNAVAILABLE: 2, TIMEOUT: 3 });
      }, 0);
    };
    Geolocation.prototype.getCurrentPosition = function (_success, error) { denied(error); };
    Geolocation.prototype.watchPosition = function (_success, error) { denied(error); return 0; };
  }

  // helm.state: this instance's own JSON value, kept by Helm under its home (the frame has no
  // storage that outlives Helm). It travels the same private path as helm.call, on a connection
  // id no manifest can declare.
  function unwrap(envelope) {
    if (envelope && envelope.ok === true) return envelope.data;
    var error = (envelope && envelope.error) || {};
    throw new TypeErrorCtor('helm.state: ' + error.code + ': ' + error.message);
  }
  var state = Object.freeze({
    get: function () { return call('$state', 'get', {}).then(unwrap); },
    set: function (value) { return call('$state', 'set', { value: value === undefined ? null : value }).then(unwrap); }
  });

  // helm.orchestrate: a tool's build (its manifest's orchestrate), started only when the user
  // clicks Start in Helm's dialog; optionally offered beside a declared write (orWrite). The
  // answers are envelopes, as helm.call's are.
  var orchestrate = Object.freeze({
    build: function (input, options) {
      var args = { input: input === undefined ? {} : input };
      var orWrite = options && options.orWrite;
      if (orWrite !== undefined && orWrite !== null) args.orWrite = orWrite;
      return call('$orchestrate', 'build', args);
    },
    status: function (session) { return call('$orchestrate', 'status', { session: session }); }
  });

  Object.defineProperty(window, 'helm', {
    value: Object.freeze({ call: call, state: state, orchestrate: orchestrate }),
    writable: false,
    configurable: false,
    enumerable: true
  });
})();
