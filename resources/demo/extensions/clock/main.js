// Clock: three read-only tools of an MCP server; results are data, shown as text.
'use strict';

const statusLine = document.getElementById('status');

function setStatus(text, isError) {
  statusLine.textContent = text;
  statusLine.classList.toggle('error', !!isError);
}

function show(id, value) {
  document.getElementById(id).textContent = value === undefined || value === null ? '—' : String(value);
}

async function refresh() {
  const [time, quote] = await Promise.all([
    helm.call('demo', 'current_time', {}),
    helm.call('demo', 'quote', {})
  ]);
  if (!time.ok) { setStatus(time.error.code + ': ' + time.error.message, true); return; }
  show('utc', time.data.utc);
  show('local', time.data.local);
  if (quote.ok) show('quote', '“' + quote.data.text + '”');
  setStatus('From the helm-demo MCP server');
}

async function roll() {
  const result = await helm.call('demo', 'roll_dice', { sides: 6, count: 2 });
  if (!result.ok) { setStatus(result.error.code + ': ' + result.error.message, true); return; }
  show('dice', result.data.rolls.join(' + '));
}

document.getElementById('roll').addEventListener('click', () => { roll(); });
refresh();
