// Helm's look for the page: its CSS variables (--helm-bg, --helm-fg, --helm-font-size…) on
// :root, in a style sheet this isolated world adopts into the document. The page reads them
// with var(); nothing of this runs in the page's world, and no inline script or style element
// is added, so the page's Content-Security-Policy stays as strict as it was.
(() => {
  "use strict";
  const sheet = new CSSStyleSheet();
  sheet.replaceSync(__HELM_THEME_CSS__);
  const adopt = () => {
    // First of the adopted sheets: the page's own adopted sheets come after and win.
    if (!document.adoptedStyleSheets.includes(sheet)) {
      document.adoptedStyleSheets = [sheet, ...document.adoptedStyleSheets];
    }
  };
  adopt();
  // Helm calls this (in this world only) when the look changes: a new scheme or text size.
  Object.defineProperty(window, "__helmTheme", {
    value: (css) => { sheet.replaceSync(String(css)); adopt(); },
  });
})();
