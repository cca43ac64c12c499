// Helm's guards in the main frame's isolated world. They run at document creation, before any
// page script, so Helm's listeners come first; the page cannot see or remove them.
(function () {
  'use strict';

  // Navigation away from the extension's own origin is refused before it starts. The engine
  // asks Helm about most navigations, but not about those that need no request (about:blank,
  // about:srcdoc): the navigate event fires for every navigation of this frame, and cancelling
  // it stops the navigation. Listeners on `navigation` survive document.open().
  var home = location.protocol + '//' + location.host;
  if (typeof navigation !== 'undefined') {
    navigation.addEventListener('navigate', function (event) {
      var target = null;
      try { target = new URL(event.destination.url); } catch (e) { /* not a URL: refused */ }
      if (target !== null && target.protocol + '//' + target.host === home) return;
      if (event.cancelable) event.preventDefault();
    });
  }

  // No copy or cut from the page: the page's own listeners could replace what the user copies,
  // and `document.execCommand('copy')` after any click would overwrite the clipboard. Cancelling
  // the event with nothing in it writes nothing. (Helm also empties the clipboard if a frame
  // writes to it by another way; see ui/host/clipboard.py.)
  function refuse(event) {
    event.stopImmediatePropagation();
    event.preventDefault();
  }
  window.addEventListener('copy', refuse, true);
  window.addEventListener('cut', refuse, true);
})();
