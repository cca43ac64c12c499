// Candidate review: preview → dialog → apply. Read the candidate whole (its revision is the
// hash TDT binds the review to), then Approve / Reject: Helm's dialog shows the candidate as Helm
// read it, and TDT records the user's decision with Helm's instruction.
'use strict';

const statusLine = document.getElementById('status');
let shown = null; // { id, revision } of the candidate on screen

function setStatus(text, isError) {
  statusLine.textContent = text;
  statusLine.classList.toggle('error', !!isError);
}

function failure(envelope) {
  const error = envelope.error || {};
  return (error.code || 'error') + ': ' + (error.message || 'no message');
}

async function open(id) {
  setStatus('Reading the candidate…');
  const result = await helm.call('tdt', 'tdt_candidate_read', { reference: id });
  if (!result.ok) { setStatus(failure(result), true); return; }
  shown = { id: result.data.id, revision: result.data.revision };
  document.getElementById('title').textContent = result.data.title;
  document.getElementById('markdown').textContent = result.data.markdown;
  document.getElementById('review').hidden = false;
  setStatus('Approve or reject it: Helm asks you to confirm.');
}

async function decide(action) {
  if (shown === null) return;
  setStatus('Waiting for your confirmation in Helm…');
  const args = { id: shown.id, expected_sha256: shown.revision, decision: { action: action } };
  const result = await helm.call('tdt', 'tdt_candidate_review', args);
  if (result.ok) {
    setStatus('Candidate ' + result.data.status + '.');
    shown = null;
    document.getElementById('review').hidden = true;
  } else if (result.error.code === 'declined') {
    setStatus('Nothing changed: you cancelled.');
  } else if (result.error.retry === 'inspect_outcome') {
    const status = await helm.call('tdt', 'tdt_candidate_review_status', { id: shown.id });
    setStatus(failure(result) + (status.ok ? ' — the candidate is now ' + status.data.status : ''), true);
  } else {
    setStatus(failure(result), true);
  }
  await refresh(false);
}

async function refresh(say) {
  const result = await helm.call('tdt', 'tdt_candidate_list', {});
  if (!result.ok) { setStatus(failure(result), true); return; }
  document.getElementById('list').replaceChildren(...result.data.items.map((item) => {
    const li = document.createElement('li');
    const b = document.createElement('button');
    b.type = 'button';
    b.textContent = item.title;
    b.addEventListener('click', () => { open(item.id); });
    li.append(b);
    return li;
  }));
  if (say !== false) {
    const count = result.data.items.length;
    setStatus(result.warnings.length ? result.warnings.join('; ')
      : count ? count + ' waiting for review' : 'No candidates waiting for review.');
  }
}

document.getElementById('approve').addEventListener('click', () => { decide('approve'); });
document.getElementById('reject').addEventListener('click', () => { decide('reject'); });
refresh();
