// Tasks: two named, read-only queries on the demo SQLite database, shown with text nodes only.
'use strict';

const statusLine = document.getElementById('status');
const rows = document.getElementById('rows');

function setStatus(text, isError) {
  statusLine.textContent = text;
  statusLine.classList.toggle('error', !!isError);
}

function cell(text) {
  const td = document.createElement('td');
  td.textContent = text === null ? '—' : String(text);
  return td;
}

async function refresh() {
  setStatus('Loading…');
  const [open, counts] = await Promise.all([
    helm.call('tasks', 'open', { limit: 20 }),
    helm.call('tasks', 'counts', {})
  ]);
  if (!open.ok) { setStatus(open.error.code + ': ' + open.error.message, true); return; }
  rows.replaceChildren(...open.data.rows.map(([, title, due]) => {
    const tr = document.createElement('tr');
    tr.append(cell(title), cell(due));
    return tr;
  }));
  if (counts.ok) {
    const summary = counts.data.rows.map(([status, n]) => n + ' ' + status).join(', ');
    setStatus(summary);
  } else {
    setStatus(open.data.rows.length + ' open');
  }
}

document.getElementById('refresh').addEventListener('click', () => { refresh(); });
refresh();
