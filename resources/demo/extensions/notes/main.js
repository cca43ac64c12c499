// Notes: list and read workspace notes; Save sends a write that Helm asks the user to confirm.
'use strict';

const statusLine = document.getElementById('status');
const picker = document.getElementById('files');
const editor = document.getElementById('text');
const saveButton = document.getElementById('save');
let current = null; // { path, sha256 }

function setStatus(text, isError) {
  statusLine.textContent = text;
  statusLine.classList.toggle('error', !!isError);
}

async function open(path) {
  setStatus('Reading ' + path + '…');
  const result = await helm.call('notes', 'read', { path: path });
  if (!result.ok) { setStatus(result.error.code + ': ' + result.error.message, true); return; }
  current = { path: result.data.path, sha256: result.data.sha256 };
  editor.value = result.data.text; // a form field's value is text, never markup
  setStatus(result.data.path);
}

async function save() {
  if (current === null) return;
  setStatus('Waiting for your confirmation in Helm…');
  const result = await helm.call('notes', 'write', {
    path: current.path, text: editor.value, expected_sha256: current.sha256
  });
  if (result.ok) {
    current.sha256 = result.data.sha256;
    setStatus('Saved ' + result.data.path);
  } else if (result.error.code === 'declined') {
    setStatus('Not saved: you cancelled.');
  } else if (result.error.code === 'conflict') {
    setStatus('The note changed on disk; reloaded it.', true);
    open(current.path);
  } else {
    setStatus(result.error.code + ': ' + result.error.message, true);
  }
}

async function refresh() {
  const result = await helm.call('notes', 'list', {});
  if (!result.ok) { setStatus(result.error.code + ': ' + result.error.message, true); return; }
  picker.replaceChildren(...result.data.files.map((file) => {
    const option = document.createElement('option');
    option.value = file.path;
    option.textContent = file.path;
    return option;
  }));
  if (result.data.files.length > 0) open(result.data.files[0].path);
  else setStatus('No notes in notes/.');
}

picker.addEventListener('change', () => { open(picker.value); });
saveButton.addEventListener('click', () => { save(); });
refresh();
