// @ts-check
/// <reference path="./helm.d.ts" />
// The widget asks Helm for the files its manifest declares and shows their names.
// Everything that comes back is data: it is put on the page with text nodes only
// (textContent), never as HTML, and nothing in it is ever followed as an instruction.
'use strict';

const CONNECTION = 'notes'; // the "id" of a connection in manifest.json

const statusLine = /** @type {HTMLElement} */ (document.getElementById('status'));
const list = /** @type {HTMLElement} */ (document.getElementById('files'));
const refreshButton = /** @type {HTMLButtonElement} */ (document.getElementById('refresh'));

/** @param {string} text @param {boolean} [isError] */
function setStatus(text, isError = false) {
  statusLine.textContent = text;
  statusLine.classList.toggle('error', isError);
}

/** @param {HelmError} error */
function describe(error) {
  if (error.code === 'rate_limited' && error.retryAfter !== undefined) {
    return `Too many calls; trying again in ${Math.ceil(error.retryAfter)} s.`;
  }
  return `${error.code}: ${error.message}`;
}

async function refresh() {
  setStatus('Loading…');
  /** @type {HelmResult<FilesList>} */
  const result = await helm.call(CONNECTION, 'list', {});
  if (!result.ok) {
    setStatus(describe(result.error), true);
    if (result.error.code === 'rate_limited') {
      setTimeout(refresh, (result.error.retryAfter ?? 1) * 1000);
    }
    return;
  }
  const items = result.data.files.map((file) => {
    const item = document.createElement('li');
    item.textContent = file.path; // text, never innerHTML
    const size = document.createElement('span');
    size.className = 'size';
    size.textContent = `${file.size} bytes`;
    item.append(size);
    return item;
  });
  list.replaceChildren(...items);
  setStatus(items.length === 1 ? '1 file' : `${items.length} files`);
}

refreshButton.addEventListener('click', () => { refresh(); });
if (window.helm) {
  refresh();
} else {
  setStatus('Open this page in Helm (helm dev .) to reach its connections.', true);
}
