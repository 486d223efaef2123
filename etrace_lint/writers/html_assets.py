"""The report's inline style and script: one file, no network, readable on a laptop and on paper."""

CSS = """
:root { --err:#c62828; --warn:#b26a00; --note:#1565c0; --ok:#2e7d32; --muted:#666; --line:#ddd; }
.etl-report { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color:#222; max-width:1200px;
  margin:0 auto; padding:8px 16px; }
.etl-report h1 { font-size:20px; margin:8px 0; } .etl-report h2 { font-size:17px; margin:24px 0 6px; }
.etl-report h3 { font-size:15px; margin:14px 0 4px; }
.etl-report code, .etl-report pre, .etl-report svg text { font-family: ui-monospace, Menlo, Consolas, monospace; }
.etl-report table { border-collapse:collapse; margin:6px 0; }
.etl-report td, .etl-report th { border:1px solid var(--line); padding:2px 8px; text-align:left; font-size:13px; }
.etl-report th { background:#f4f4f4; }
.etl-report .level-error { color:var(--err); } .etl-report .level-warning { color:var(--warn); }
.etl-report .level-note { color:var(--note); }
.etl-report .controls { position:sticky; top:0; background:#fff; padding:6px 0; border-bottom:1px solid var(--line);
  display:flex; gap:12px; flex-wrap:wrap; align-items:center; z-index:2; }
.etl-report .controls input[type=search] { min-width:260px; padding:3px 6px; }
.etl-report .target { border-top:2px solid #333; margin-top:18px; content-visibility:auto; contain-intrinsic-size:auto 900px; }
.etl-report .graph { overflow:auto; border:1px solid var(--line); background:#fcfcfc; max-height:640px; }
.etl-report svg .node rect { stroke:#555; stroke-width:1; fill:#fff; rx:4; }
.etl-report svg .node text { font-size:12px; dominant-baseline:middle; }
.etl-report svg .weight.v-learns rect { fill:#e8f5e9; stroke:var(--ok); }
.etl-report svg .weight.v-not rect { fill:#ffebee; stroke:var(--err); stroke-width:2; stroke-dasharray:5 3; }
.etl-report svg .weight.v-partly rect { fill:#e8f5e9; stroke:var(--err); stroke-width:2; stroke-dasharray:5 3; }
.etl-report svg .weight.v-against rect { fill:#ffebee; stroke:var(--err); stroke-width:4; }
.etl-report svg .weight.v-same rect { fill:#e3f2fd; stroke:var(--note); }
.etl-report svg .weight.v-unknown rect { fill:#f5f5f5; stroke:#999; }
.etl-report svg .op rect { fill:#fff8e1; } .etl-report svg .op.plain rect { fill:#fff; stroke:var(--err); }
.etl-report svg .state rect { fill:#ede7f6; rx:13; } .etl-report svg .group rect { fill:#d1c4e9; }
.etl-report svg .site rect { fill:#fff3e0; stroke:var(--warn); }
.etl-report svg .output rect { fill:#e3f2fd; stroke:var(--note); rx:13; }
.etl-report svg .region rect { fill:#eceff1; fill-opacity:0.6; stroke:#78909c; stroke-width:1; rx:6; }
.etl-report svg .region text { font-size:10px; fill:#455a64; }
.etl-report svg .edge { fill:none; stroke:#777; stroke-width:1.3; }
.etl-report svg .edge.plain { stroke:var(--err); stroke-dasharray:6 3; }
.etl-report svg .edge.member { stroke:#7e57c2; stroke-dasharray:2 3; }
.etl-report svg .edge.bypass { stroke:var(--note); stroke-dasharray:8 3; }
.etl-report svg .edge.blocked { stroke:var(--err); stroke-width:2.2; stroke-dasharray:3 3; }
.etl-report svg .edge-link .edge { cursor:pointer; } .etl-report svg .edge-link:hover .edge { stroke-width:3.5; }
.etl-report svg a:focus rect, .etl-report svg .hl rect { stroke:#000; stroke-width:3; }
.etl-report .legend span { margin-right:12px; font-size:12px; }
.etl-report .finding { border-left:4px solid var(--line); padding:4px 10px; margin:8px 0; }
.etl-report .finding.level-error { border-color:var(--err); } .etl-report .finding.level-warning { border-color:var(--warn); }
.etl-report .finding.level-note { border-color:var(--note); }
.etl-report .finding .msg { color:#222; } .etl-report .finding.hl { background:#fffde7; }
.etl-report pre.excerpt { background:#f7f7f7; padding:4px 0; margin:4px 0; overflow:auto; font-size:12px; color:#222; }
.etl-report pre.excerpt span { display:block; padding:0 8px; white-space:pre; }
.etl-report pre.excerpt .hit { background:#fff59d; }
.etl-report pre.diff .add { background:#e6ffed; } .etl-report pre.diff .del { background:#ffeef0; }
.etl-report .bar { display:inline-block; height:10px; background:#5c6bc0; vertical-align:middle; }
.etl-report .muted { color:var(--muted); } .etl-report [hidden] { display:none !important; }
@media print { .etl-report .controls { display:none; } .etl-report .graph { max-height:none; overflow:visible; }
  .etl-report .target { page-break-before:always; } }
"""

# filters by rule, level and text; a node and its findings point at each other
# called with the report's id: a notebook may insert its scripts where document.currentScript is null
JS = """
function etlReport(rootId) {
  var root = document.getElementById(rootId);
  if (!root) { return; }
  var rule = root.querySelector('.f-rule'), text = root.querySelector('.f-text');
  var levels = root.querySelectorAll('.f-level');
  function apply() {
    var wanted = {}, shown = 0;
    levels.forEach(function (box) { wanted[box.value] = box.checked; });
    var needle = (text.value || '').toLowerCase();
    root.querySelectorAll('.finding').forEach(function (card) {
      var about = [card.textContent, card.dataset.weights || '', card.dataset.hiddenStates || ''].join(' ');
      var ok = wanted[card.dataset.level] && (!rule.value || card.dataset.rule === rule.value) &&
        (!needle || about.toLowerCase().indexOf(needle) >= 0);
      card.hidden = !ok; if (ok) { shown += 1; }
    });
    root.querySelectorAll('section.target').forEach(function (section) {
      var any = section.querySelector('.finding:not([hidden])') !== null;
      var named = needle && section.dataset.target.toLowerCase().indexOf(needle) >= 0;
      section.hidden = !(any || named || (!needle && !rule.value && section.dataset.findings === '0'));
    });
    root.querySelector('.f-count').textContent = shown + ' shown';
  }
  [rule, text].forEach(function (el) { el.addEventListener('input', apply); });
  levels.forEach(function (el) { el.addEventListener('change', apply); });
  function highlight(ids) {
    root.querySelectorAll('.hl').forEach(function (el) { el.classList.remove('hl'); });
    ids.forEach(function (id) { var el = document.getElementById(id); if (el) { el.classList.add('hl'); } });
  }
  root.querySelectorAll('svg .node').forEach(function (node) {
    node.addEventListener('click', function (event) {
      var ids = (node.dataset.findings || '').split(' ').filter(Boolean);
      highlight(ids.concat([node.id]));
      if (ids.length) { document.getElementById(ids[0]).scrollIntoView({block: 'center'}); }
      event.preventDefault();
    });
  });
  root.querySelectorAll('svg a.edge-link').forEach(function (link) {
    link.addEventListener('click', function () {
      var edge = link.querySelector('.edge');
      highlight((edge.dataset.findings || '').split(' ').filter(Boolean).concat([edge.dataset.from, edge.dataset.to]));
    });
  });
  root.querySelectorAll('a.to-node').forEach(function (link) {
    link.addEventListener('click', function () { highlight([link.getAttribute('href').slice(1), link.closest('.finding').id]); });
  });
  apply();
}
"""
