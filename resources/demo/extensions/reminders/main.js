// Reminders: TDT's list, and create / complete / snooze, each confirmed by the user in Helm.
// Complete and snooze send the reminder_revision last read: a stale one is TDT's refusal.
'use strict';

const statusLine = document.getElementById('status');
const rows = document.getElementById('rows');

function setStatus(text, isError) {
  statusLine.textContent = text;
  statusLine.classList.toggle('error', !!isError);
}

function failure(envelope) {
  const error = envelope.error || {};
  return (error.code || 'error') + ': ' + (error.message || 'no message');
}

function utc(date) { return date.toISOString().replace(/\.\d{3}Z$/, '+00:00'); }

function button(label, onClick) {
  const b = document.createElement('button');
  b.type = 'button';
  b.textContent = label;
  b.addEventListener('click', onClick);
  return b;
}

async function write(tool, args, done) {
  setStatus('Waiting for your confirmation in Helm…');
  const result = await helm.call('tdt', tool, args);
  if (result.ok) setStatus(done);
  else if (result.error.code === 'declined') setStatus('Nothing changed: you cancelled.');
  else if (result.error.code === 'stale_revision') setStatus('The reminder changed meanwhile; reloaded it.', true);
  else setStatus(failure(result), true); // inspect_outcome included: shown, never retried
  await refresh(false);
}

function row(item) {
  const tr = document.createElement('tr');
  const due = document.createElement('td');
  due.textContent = item.due_at;
  const title = document.createElement('td');
  title.textContent = item.title;
  const actions = document.createElement('td');
  const ref = { id: item.id, reminder_revision: item.reminder_revision };
  actions.append(
    button('Done', () => write('tdt_reminder_complete', ref, 'Marked done.')),
    button('Snooze', () => {
      const later = new Date(Math.max(Date.parse(item.due_at), Date.now()) + 86400000);
      write('tdt_reminder_snooze', { ...ref, changes: { due_at: utc(later) } }, 'Snoozed to ' + utc(later) + '.');
    })
  );
  tr.append(due, title, actions);
  return tr;
}

async function refresh(say) {
  const result = await helm.call('tdt', 'tdt_reminder_list', {});
  if (!result.ok) { setStatus(failure(result), true); return; }
  rows.replaceChildren(...result.data.items.map(row));
  if (say !== false) {
    setStatus(result.warnings.length ? result.warnings.join('; ')
      : result.data.items.length + ' pending');
  }
}

document.getElementById('create').addEventListener('submit', (event) => {
  event.preventDefault();
  const title = document.getElementById('title').value.trim();
  const due = new Date(document.getElementById('due').value);
  if (!title || Number.isNaN(due.getTime())) return;
  write('tdt_reminder_create', { title: title, body: title, due_at: utc(due), timezone: 'UTC' }, 'Added.');
});
refresh();
