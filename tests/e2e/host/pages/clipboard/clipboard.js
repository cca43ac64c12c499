// On a click, the page tries to put its own text on the clipboard ('direct'), or first sheds
// every listener of the document and window with document.open() ('reopened').
window.plant = { mode: 'direct' };
document.getElementById('plant').addEventListener('click', function () {
  var mode = window.plant.mode;
  if (mode === 'reopened') {
    document.open();
    document.write('<p>reopened</p>');
    document.close();
  }
  document.addEventListener('copy', function (e) {
    e.clipboardData.setData('text/plain', 'planted by the page');
    e.preventDefault();
  }, { once: true });
  console.log('plant:' + mode + ':' + document.execCommand('copy'));
});
