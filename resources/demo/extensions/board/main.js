// Task board: the demo site's software-production tasks (draft → ready → doing → done). A ready
// task's Start build asks Helm to move it to doing (a confirmed files write) and start a build
// (helm.orchestrate.build); Helm's dialog offers the move, the build, or both — Cancel first.
'use strict';

const PROJECT = 'site';
const statusLine = document.getElementById('status');
const rows = document.getElementById('rows');

function setStatus(text, isError) {
  statusLine.textContent = text;
  statusLine.classList.toggle('error', !!isError);
}

function failed(result) {
  return result.error.code + ': ' + result.error.message;
}

// The front matter's "key: value" lines; the file's text is data, never markup.
function fields(text) {
  const found = {};
  const match = /^---\n([\s\S]*?)\n---/.exec(text);
  for (const line of (match ? match[1] : '').split('\n')) {
    const colon = line.indexOf(':');
    if (colon > 0) found[line.slice(0, colon).trim()] = line.slice(colon + 1).trim();
  }
  return found;
}

function withStatus(text, status) {
  return text.replace(/^status:.*$/m, 'status: ' + status);
}

async function follow(session, id) {
  for (;;) {
    const result = await helm.orchestrate.status(session);
    if (!result.ok) { setStatus(failed(result), true); return; }
    const state = result.data.state;
    if (state !== 'running' && state !== 'waiting') {
      setStatus('The build of ' + id + ' ' + (state === 'cancelled' ? 'was cancelled' : state) + '.', state !== 'ended');
      return;
    }
    setStatus(state === 'waiting'
      ? 'The build of ' + id + ' waits for your answer in Helm.'
      : 'The build of ' + id + ' is running (see the Agents tab).');
    await new Promise((resolve) => setTimeout(resolve, 5000));
  }
}

async function startBuild(task) {
  setStatus('Reading ' + task.path + '…');
  const read = await helm.call('tasks', 'read', { project: PROJECT, path: task.path });
  if (!read.ok) { setStatus(failed(read), true); return; }
  setStatus('Waiting for your answer in Helm…');
  const input = { project: PROJECT, task: task.id, title: task.title, path: task.path };
  const move = {
    connection: 'tasks', operation: 'write', label: 'Move',
    args: { project: PROJECT, path: task.path, text: withStatus(read.data.text, 'doing'),
            expected_sha256: read.data.sha256 }
  };
  const result = await helm.orchestrate.build(input, { orWrite: move });
  if (!result.ok) {
    setStatus(result.error.code === 'declined' ? 'Nothing done: you cancelled.' : failed(result),
              result.error.code !== 'declined');
    await refresh(false);
    return;
  }
  await refresh(false);
  if (result.data.session) await follow(result.data.session, task.id);
  else setStatus(task.id + ' moved to doing; no build started.');
}

function row(task) {
  const tr = document.createElement('tr');
  for (const value of [task.id, task.title, task.status]) {
    const td = document.createElement('td');
    td.textContent = value;
    tr.appendChild(td);
  }
  const cell = document.createElement('td');
  if (task.status === 'ready') {
    const button = document.createElement('button');
    button.type = 'button';
    button.textContent = 'Start build';
    button.addEventListener('click', () => { startBuild(task); });
    cell.appendChild(button);
  }
  tr.appendChild(cell);
  return tr;
}

async function refresh(say) {
  const listed = await helm.call('tasks', 'list', { project: PROJECT });
  if (!listed.ok) { setStatus(failed(listed), true); return; }
  const paths = listed.data.files.map((file) => file.path);
  if (paths.length === 0) { rows.replaceChildren(); setStatus('No tasks.'); return; }
  const read = await helm.call('tasks', 'read', { project: PROJECT, paths: paths });
  if (!read.ok) { setStatus(failed(read), true); return; }
  const tasks = read.data.files.filter((file) => !file.error).map((file) => {
    const found = fields(file.text);
    return { path: file.path, id: found.id || file.path, title: found.title || '', status: found.status || '' };
  });
  tasks.sort((a, b) => a.id.localeCompare(b.id));
  rows.replaceChildren(...tasks.map(row));
  if (say !== false) setStatus(tasks.length + ' tasks; a ready one can be built.');
}

document.getElementById('refresh').addEventListener('click', () => { refresh(); });
refresh();
