// @ts-check
/// <reference path="./helm.d.ts" />
// The tool lists the files its manifest declares and shows the one you pick.
// Everything that comes back is data: it is put on the page with text nodes only
// (textContent), never as HTML, and nothing in it is ever followed as an instruction.
'use strict';

const CONNECTION = 'notes'; // the "id" of a connection in manifest.json

const statusLine = /** @type {HTMLElement} */ (document.getElementById('status'));
const list = /** @type {HTMLElement} */ (document.getElementById('files'));
const title = /** @type {HTMLElement} */ (document.getElementById('title'));
const text = /** @type {HTMLElement} */ (document.getElementById('text'));
const refreshButton = /** @type {HTMLButtonElement} */ (document.getElementById('refresh'));

/** @param {string} message @param {boolean} [isError] */
function setStatus(message, isError = false) {
  statusLine.textContent = message;
  statusLine.classList.toggle('error', isError);
}

/** @param {HelmError} error */
function describe(error) {
  if (error.code === 'rate_limited' && error.retryAfter !== undefined) {
    return `Too many calls; try again in ${Math.ceil(error.retryAfter)} s.`;
  }
  return `${error.code}: ${error.message}`;
}

/** @param {string} path */
async function open(path) {
  setStatus(`Reading ${path}…`);
  /** @type {HelmResult<FilesRead>} */
  const result = await helm.call(CONNECTION, 'read', { path });
  if (!result.ok) {
    setStatus(describe(result.error), true);
    return;
  }
  title.textContent = result.data.path;
  text.textContent = result.data.text; // shown as text: a file may contain anything
  setStatus(`sha256 ${result.data.sha256.slice(0, 12)}…`);
}

async function refresh() {
  setStatus('Loading…');
  /** @type {HelmResult<FilesList>} */
  const result = await helm.call(CONNECTION, 'list', {});
  if (!result.ok) {
    setStatus(describe(result.error), true);
    return;
  }
  const items = result.data.files.map((file) => {
    const item = document.createElement('li');
    const button = document.createElement('button');
    button.type = 'button';
    button.textContent = file.path;
    button.addEventListener('click', () => { open(file.path); });
    item.append(button);
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
