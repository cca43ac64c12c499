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
})();
