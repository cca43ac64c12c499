"""The main window's list of a workspace's projects and extensions, with each one's state.

Under each extension, its connections (folded until the user opens them, or one is stopped),
so the kill switch can stop one connection as well as the whole extension; what the user
stopped says so in the State column. Each row has its icon (the extension's kind and state,
the connection's kind) in the colours of the look in force; projects show their folder
home-relative, the full path in the tooltip.
"""

from __future__ import annotations

from ui import icons
from ui.paths import set_item_path
from ui.qt import QBrush, QColor, QFont, QFontMetrics, QStyle, Qt, QTreeWidget, QTreeWidgetItem
from ui.text import elide
from ui.theme import Theme
from ui.theme_data import Look
from ui.workspace_model import ExtensionRow, ExtensionState, WorkspaceModel

EXT_ROLE = Qt.ItemDataRole.UserRole
CONN_ROLE = Qt.ItemDataRole.UserRole + 1
STOPPED = "stopped"
STATE_MAX_EMS = 18
"""The State column fits its states up to this many ems; a longer one is elided (whole in its tooltip)."""
STOPPED_TIP = "You stopped it: its calls are refused until you turn it back on (Turn on)."
ICON_STATES = {
    ExtensionState.APPROVED: "approved",
    ExtensionState.NEEDS_APPROVAL: "needs-approval",
    ExtensionState.INVALID: "invalid",
    ExtensionState.FORBIDDEN: "stopped",
}


def extension_state(row: ExtensionRow) -> str:
    state = row.state.value if row.enabled else f"disabled, {row.state.value}"
    return f"{STOPPED} · {state}" if row.stopped else state


def state_icon_name(row: ExtensionRow) -> str:
    """The icon of the row's state: what the user did to it first, then its approval."""
    if row.stopped:
        return "stopped"
    return ICON_STATES[row.state] if row.enabled else "disabled"


def set_up(tree: QTreeWidget) -> None:
    """Columns Name and State: names take the width the states leave."""
    tree.setHeaderLabels(["Name", "State"])
    tree.setIndentation(tree.fontMetrics().horizontalAdvance("M") * 3 // 2)  # names keep the room
    header = tree.header()
    header.setStretchLastSection(False)
    header.setSectionResizeMode(0, header.ResizeMode.Stretch)
    header.setSectionResizeMode(1, header.ResizeMode.Interactive)


def fit_states(tree: QTreeWidget, extensions: QTreeWidgetItem) -> None:
    """Size the State column to the extensions' and connections' states, not to the projects'
    folders, which would leave no room for the names."""
    icon = tree.style().pixelMetric(QStyle.PixelMetric.PM_SmallIconSize)
    em = tree.fontMetrics().horizontalAdvance("M")
    widths = [tree.fontMetrics().horizontalAdvance(tree.headerItem().text(1))]
    stack = [extensions.child(i) for i in range(extensions.childCount())]
    while stack:
        item = stack.pop()
        if item is not None:
            widths.append(QFontMetrics(item.font(1)).horizontalAdvance(item.text(1)) + icon)
            stack += [item.child(j) for j in range(item.childCount())]
    tree.header().resizeSection(1, min(max(widths) + 2 * em, STATE_MAX_EMS * em))  # + margins


def fill(tree: QTreeWidget, model: WorkspaceModel, workspace: str) -> list[ExtensionRow]:
    """Show ``workspace``'s projects and extensions in ``tree``; returns the extension rows."""
    tree.clear()
    look = Theme.of().look
    ws = model.workspace(workspace)
    projects = QTreeWidgetItem(tree, ["Projects", ""])
    for pid, path in sorted(ws.projects.items()):
        project = QTreeWidgetItem(projects, [pid, ""])
        project.setIcon(0, icons.tinted("kind-files", look.colours.text, look.colours.on_accent))
        set_item_path(project, 1, path)
    extensions = QTreeWidgetItem(tree, ["Extensions", ""])
    rows = model.extensions(workspace)
    for row in rows:
        item = QTreeWidgetItem(extensions, [elide(f"{row.name} {row.version}", 60), extension_state(row)])
        item.setData(0, EXT_ROLE, row.id)
        item.setToolTip(0, f"{row.name} {row.version} ({row.id})")  # whole, where the column elides it
        item.setIcon(0, icons.extension_icon(look, row.kind))
        item.setIcon(1, icons.state_icon(look, state_icon_name(row)))
        # How to fix it, in the decision's words; else the whole state (the column is narrow).
        item.setToolTip(1, elide(row.problem, 300) or (STOPPED_TIP if row.stopped else extension_state(row)))
        _mark(item, row.stopped, look)
        _connections(item, row, look)
    projects.setExpanded(True)
    extensions.setExpanded(True)
    fit_states(tree, extensions)
    return rows


def _connections(item: QTreeWidgetItem, row: ExtensionRow, look: Look) -> None:
    for conn_id, kind, stopped in row.connections:
        child = QTreeWidgetItem(item, [elide(f"{conn_id} ({kind})", 60), STOPPED if stopped else "on"])
        child.setData(0, EXT_ROLE, row.id)
        child.setData(0, CONN_ROLE, conn_id)
        child.setIcon(0, icons.kind_icon(look, kind))
        if stopped:
            child.setIcon(1, icons.state_icon(look, "stopped"))
        child.setToolTip(0, f"Connection {conn_id} of {row.name}")
        child.setToolTip(1, STOPPED_TIP if stopped else "On: select it and press Stop to stop it now")
        _mark(child, stopped, look)
    # Its connections show when asked for, or when the user stopped one of them.
    item.setExpanded(any(stopped for _cid, _kind, stopped in row.connections))


def _mark(item: QTreeWidgetItem, stopped: bool, look: Look) -> None:
    if stopped:
        item.setForeground(1, QBrush(QColor(look.colours.danger)))
        font = QFont(item.font(1))
        font.setBold(True)
        item.setFont(1, font)


def selected_ids(tree: QTreeWidget) -> tuple[str | None, str | None]:
    """The extension and, for a connection row, the connection of the current item."""
    item = tree.currentItem()
    if item is None:
        return None, None
    ext, conn = item.data(0, EXT_ROLE), item.data(0, CONN_ROLE)
    return (str(ext) if ext else None), (str(conn) if conn else None)


def find(tree: QTreeWidget, extension: str, connection: str | None = None) -> QTreeWidgetItem | None:
    """The row of ``extension`` (or of one of its connections)."""
    stack = [tree.topLevelItem(i) for i in range(tree.topLevelItemCount())]
    while stack:
        item = stack.pop()
        if item is None:
            continue
        if item.data(0, EXT_ROLE) == extension and (item.data(0, CONN_ROLE) or None) == connection:
            return item
        stack += [item.child(j) for j in range(item.childCount())]
    return None
