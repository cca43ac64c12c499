// Workspace status: the TDT envelope ({api_version, ok, data, coverage, warnings, error}) as text.
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
  setStatus('Asking the TDT server…');
  const status = await helm.call('tdt', 'tdt_workspace_status', {});
  if (!status.ok) { setStatus(failure(status), true); return; }
  const data = status.data;
  show('candidates', data.pending_candidates);
  show('projects', data.projects_total === undefined ? undefined
    : data.projects_total + ' (' + data.projects_available + ' available)');
  show('due', data.due_reminders);
  show('observed', data.observed_at);
  // The stand-in (no tdt installed) says so in its warnings; a real TDT workspace has none.
  setStatus(status.warnings.length ? status.warnings.join('; ') : 'TDT workspace, api ' + status.api_version);
}

document.getElementById('refresh').addEventListener('click', () => { refresh(); });
refresh();
