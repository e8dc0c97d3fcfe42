// Filtering and sorting of a listing page's item table. Plain JavaScript, no network, no library:
// the page works from file://. Rows carry their facets as data-* attributes ("|"-separated lists).
(function () {
  "use strict";
  var table = document.querySelector("table.ts-items");
  if (!table) { return; }
  var body = table.tBodies[0];
  var rows = Array.prototype.slice.call(body.rows);
  var controls = Array.prototype.slice.call(document.querySelectorAll(".filters [data-filter]"));
  var count = document.querySelector(".filters .count");

  function apply() {
    var shown = 0;
    rows.forEach(function (row) {
      var keep = controls.every(function (control) {
        var wanted = control.value.trim().toLowerCase();
        if (!wanted) { return true; }
        if (control.dataset.filter === "text") { return row.textContent.toLowerCase().indexOf(wanted) >= 0; }
        return (row.dataset[control.dataset.filter] || "").toLowerCase().split("|").indexOf(wanted) >= 0;
      });
      row.hidden = !keep;
      if (keep) { shown += 1; }
    });
    if (count) { count.textContent = shown + " of " + rows.length + " items"; }
  }

  function sortKey(row, column) {
    var cell = row.cells[column];
    var text = cell.hasAttribute("data-sort") ? cell.getAttribute("data-sort") : cell.textContent.trim();
    var value = parseFloat(text);
    return text === "" || isNaN(value) ? [1, text.toLowerCase()] : [0, value];
  }

  Array.prototype.forEach.call(table.tHead.rows[0].cells, function (header, column) {
    header.classList.add("sortable");
    header.addEventListener("click", function () {
      var ascending = !header.classList.contains("sorted-asc");
      Array.prototype.forEach.call(table.tHead.rows[0].cells, function (other) {
        other.classList.remove("sorted-asc", "sorted-desc");
      });
      header.classList.add(ascending ? "sorted-asc" : "sorted-desc");
      rows.sort(function (a, b) {
        var x = sortKey(a, column), y = sortKey(b, column);
        if (x[0] !== y[0]) { return x[0] - y[0]; }  // empty cells last either way
        var order = x[1] < y[1] ? -1 : x[1] > y[1] ? 1 : 0;
        return ascending ? order : -order;
      });
      rows.forEach(function (row) { body.appendChild(row); });
    });
  });

  // Links such as all.html#outcome=failed&category=state_dependency open a filtered listing. Choices
  // are matched in lower case (#code=MINEFIELD and #code=minefield select the same option).
  var preset = new URLSearchParams(window.location.hash.replace(/^#/, ""));
  controls.forEach(function (control) {
    if (preset.has(control.dataset.filter)) {
      var given = preset.get(control.dataset.filter);
      control.value = control.tagName === "SELECT" ? given.trim().toLowerCase() : given;
    }
    control.addEventListener("input", apply);
    control.addEventListener("change", apply);
  });
  apply();
})();
