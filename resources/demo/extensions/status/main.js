// Workspace status: TDT envelopes ({api_version, ok, data, coverage, warnings, error}) as text.
'use strict';

const statusLine = document.getElementById('status');

function setStatus(text, isError) {
  statusLine.textContent = text;
  statusLine.classList.toggle('error', !!isError);
}

function show(id, value) {
  document.getElementById(id).textContent = value === undefined || value === null ? '—' : String(value);
}

function failure(envelope) {
  const error = envelope.error || {};
  const retry = error.retry === 'safe' ? ' (you can retry)' : '';
  return (error.code || 'error') + ': ' + (error.message || 'no message') + retry;
}

async function refresh() {
  const [status, reminders] = await Promise.all([
    helm.call('tdt', 'tdt_workspace_status', {}),
    helm.call('tdt', 'tdt_reminder_list', {})
  ]);
  if (!status.ok) { setStatus(failure(status), true); return; }
  show('workspace', status.data.workspace);
  show('files', status.data.files);
  show('last', status.data.last_change);
  if (reminders.ok) {
    document.getElementById('reminders').replaceChildren(...reminders.data.reminders.map((r) => {
      const item = document.createElement('li');
      item.textContent = r.due + ' — ' + r.text;
      return item;
    }));
    setStatus(reminders.warnings.length ? reminders.warnings.join('; ') : 'TDT api ' + status.api_version);
  } else {
    setStatus(failure(reminders), true);
  }
}

refresh();
