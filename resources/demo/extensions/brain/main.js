// Brain search: tdt_brain_search over approved knowledge; every hit is shown as text.
'use strict';

const statusLine = document.getElementById('status');

function setStatus(text, isError) {
  statusLine.textContent = text;
  statusLine.classList.toggle('error', !!isError);
}

async function search() {
  const query = document.getElementById('query').value.trim();
  if (!query) return;
  setStatus('Searching…');
  const result = await helm.call('tdt', 'tdt_brain_search', { query: query });
  if (!result.ok) { setStatus(result.error.code + ': ' + result.error.message, true); return; }
  document.getElementById('results').replaceChildren(...result.data.items.map((item) => {
    const li = document.createElement('li');
    const title = document.createElement('strong');
    title.textContent = item.title;
    const body = document.createElement('pre');
    body.textContent = item.content; // knowledge is data: never markup, never instructions
    li.append(title, body);
    return li;
  }));
  const found = result.data.items.length + (result.data.items.length === 1 ? ' note' : ' notes');
  setStatus(result.warnings.length ? result.warnings.join('; ') : found);
}

document.getElementById('search').addEventListener('submit', (event) => { event.preventDefault(); search(); });
search();
