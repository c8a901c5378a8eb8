//! Drawing the picker: a title line, the filter line, the session list, the preview pane and
//! a line of keys, into any ratatui frame (the terminal's, or a test backend's buffer). Every
//! text from a session file reaches the buffer sanitised.

use pi_retrospect_app::picker::Preview;
use pi_retrospect_render::text::{field, local_time, thousands};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};
use unicode_width::UnicodeWidthChar;

use crate::index::Entry;
use crate::state::{FoundText, Mode, PreviewSlot, Row, Scope, State};

/// The smallest terminal the picker draws in.
pub(crate) const MIN_WIDTH: u16 = 40;
/// The smallest terminal height the picker draws in.
pub(crate) const MIN_HEIGHT: u16 = 8;

/// Terminals at least this wide show the preview beside the list, others below it.
const SIDE_BY_SIDE_WIDTH: u16 = 120;

/// The styles of the picker, with colour or without (`NO_COLOR`: only bold, dim, underline
/// and reverse).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Theme {
    /// Whether to use colour.
    pub paint: pi_retrospect_render::Paint,
}

impl Theme {
    fn bar(self) -> Style {
        Style::new().add_modifier(Modifier::REVERSED)
    }

    fn selected(self) -> Style {
        Style::new().add_modifier(Modifier::REVERSED)
    }

    fn matched(self) -> Style {
        if self.paint.is_on {
            Style::new().fg(Color::Yellow).add_modifier(Modifier::BOLD)
        } else {
            Style::new().add_modifier(Modifier::BOLD | Modifier::UNDERLINED)
        }
    }

    fn dim(self) -> Style {
        Style::new().add_modifier(Modifier::DIM)
    }

    fn strong(self) -> Style {
        Style::new().add_modifier(Modifier::BOLD)
    }

    fn role(self, is_user: bool) -> Style {
        let style = Style::new().add_modifier(Modifier::BOLD);
        match (self.paint.is_on, is_user) {
            (false, _) => style,
            (true, true) => style.fg(Color::Cyan),
            (true, false) => style.fg(Color::Green),
        }
    }

    fn warning(self) -> Style {
        if self.paint.is_on {
            Style::new().fg(Color::Yellow)
        } else {
            Style::new().add_modifier(Modifier::BOLD)
        }
    }
}

/// What the view needs besides the state.
#[derive(Debug)]
pub(crate) struct ViewContext<'a> {
    /// The styles.
    pub theme: Theme,
    /// The zone times are shown in.
    pub time_zone: &'a jiff::tz::TimeZone,
}

/// Draws the whole picker into `frame`.
pub(crate) fn draw(frame: &mut Frame<'_>, state: &mut State, context: &ViewContext<'_>) {
    let area = frame.area();
    if area.width < MIN_WIDTH || area.height < MIN_HEIGHT {
        let text = format!("Make the terminal at least {MIN_WIDTH}x{MIN_HEIGHT} (Esc quits)");
        frame.render_widget(
            Paragraph::new(text).wrap(ratatui::widgets::Wrap { trim: true }),
            area,
        );
        return;
    }
    let [title, filter, body, keys] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(1),
        Constraint::Fill(1),
        Constraint::Length(1),
    ])
    .areas(area);
    let (list, preview) = if area.width >= SIDE_BY_SIDE_WIDTH {
        let [list, preview] =
            Layout::horizontal([Constraint::Percentage(60), Constraint::Percentage(40)])
                .areas(body);
        (list, Pane::Side(preview))
    } else {
        let [list, preview] =
            Layout::vertical([Constraint::Percentage(45), Constraint::Percentage(55)]).areas(body);
        (list, Pane::Below(preview))
    };
    state.prepare(usize::from(list.height));
    draw_title(frame, title, state, context.theme);
    draw_filter(frame, filter, state);
    draw_list(frame, list, state, context);
    draw_preview(frame, preview, state, context);
    draw_keys(frame, keys, state, context.theme);
    if let Mode::Confirm { cwd, .. } = &state.mode {
        draw_confirm(frame, area, cwd, context.theme);
    }
}

/// Where the preview pane sits.
#[derive(Debug, Clone, Copy)]
enum Pane {
    /// Right of the list, with a border on its left.
    Side(Rect),
    /// Below the list, with a border on top.
    Below(Rect),
}

fn draw_title(frame: &mut Frame<'_>, area: Rect, state: &State, theme: Theme) {
    let scope = match state.scope {
        Scope::Here => format!(" Pi sessions in {}", field(&state.here)),
        Scope::All => " Pi sessions in all projects".to_owned(),
    };
    let loading = &state.loading;
    let progress = if !loading.is_index_complete {
        "listing all projects… ".to_owned()
    } else if loading.n_summaries_done < loading.n_summaries_total {
        format!(
            "reading names {}/{} ",
            thousands(loading.n_summaries_done),
            thousands(loading.n_summaries_total)
        )
    } else {
        String::new()
    };
    draw_split_line(frame, area, &scope, &progress, theme.bar());
}

fn draw_filter(frame: &mut Frame<'_>, area: Rect, state: &State) {
    let right = match &state.full_text {
        Some(full_text) => {
            let searching = if full_text.is_done {
                String::new()
            } else {
                format!(
                    " · {}/{} files",
                    thousands(full_text.n_done),
                    thousands(full_text.n_total)
                )
            };
            format!("full text: {} found{searching} ", thousands(state.n_listed))
        }
        None => format!(
            "{}/{} ",
            thousands(state.n_listed),
            thousands(state.n_in_scope)
        ),
    };
    let query = field(&state.query);
    let left = format!("> {query}");
    // A long filter shows its end, where the typing is.
    let width = usize::from(area.width);
    let left = fit(
        &left,
        width.saturating_sub(text_width(&right).min(width / 2) + 1),
        true,
    );
    let cursor_x = area.x + u16::try_from(text_width(&left)).unwrap_or(u16::MAX);
    draw_split_line(frame, area, &left, &right, Style::new());
    if state.mode == Mode::Browse && cursor_x < area.x + area.width {
        frame.set_cursor_position((cursor_x, area.y));
    }
}

/// Draws `left` and `right` on one line, `right` flush right and cut first when both do not
/// fit.
fn draw_split_line(frame: &mut Frame<'_>, area: Rect, left: &str, right: &str, style: Style) {
    let width = usize::from(area.width);
    let right = fit(right, width / 2, false);
    let left = fit(left, width - text_width(&right), false);
    let gap = width - text_width(&left) - text_width(&right);
    let line = Line::from(vec![
        Span::raw(left),
        Span::raw(" ".repeat(gap)),
        Span::raw(right),
    ])
    .style(style);
    frame.render_widget(Paragraph::new(line), area);
}

fn draw_list(frame: &mut Frame<'_>, area: Rect, state: &State, context: &ViewContext<'_>) {
    if state.rows.is_empty() {
        let message = if state
            .full_text
            .as_ref()
            .is_some_and(|search| !search.is_done)
        {
            "searching…"
        } else if !state.query.is_empty() || state.full_text.is_some() {
            "nothing matches"
        } else if state.scope == Scope::Here && !state.loading.is_index_complete {
            "no sessions here yet; listing all projects…"
        } else if state.scope == Scope::Here {
            "no sessions were started here: Tab lists all projects"
        } else {
            "no sessions"
        };
        let line = Line::styled(format!("  {message}"), context.theme.dim());
        frame.render_widget(Paragraph::new(line), area);
        return;
    }
    let end = (state.offset + usize::from(area.height)).min(state.rows.len());
    let lines: Vec<Line<'_>> = state.rows[state.offset..end]
        .iter()
        .enumerate()
        .map(|(n, row)| {
            let is_selected = state.offset + n == state.selected;
            list_line(state, row, is_selected, usize::from(area.width), context)
        })
        .collect();
    frame.render_widget(Paragraph::new(lines), area);
}

/// Returns one row of the list: marker, start time, title (indented by depth), and in the
/// all-projects scope the cwd, then the id's first characters.
fn list_line<'a>(
    state: &'a State,
    row: &Row,
    is_selected: bool,
    width: usize,
    context: &ViewContext<'_>,
) -> Line<'a> {
    let theme = context.theme;
    let entry = &state.index.entries[row.entry];
    let marks = state
        .highlights
        .get(&row.entry)
        .map_or(&[][..], Vec::as_slice);
    let marker = if is_selected { "› " } else { "  " };
    let when: String = local_time(&entry.timestamp, context.time_zone)
        .chars()
        .take(16)
        .collect();
    let mut spans = vec![
        Span::raw(marker),
        Span::styled(format!("{when:<16} "), theme.dim()),
    ];
    let mut used = 2 + 17;
    let id_width = 8.min(entry.id.chars().count());
    let cwd_width = if state.scope == Scope::All {
        (width.saturating_sub(used + id_width + 2) / 3).min(28)
    } else {
        0
    };
    let title_width =
        width.saturating_sub(used + id_width + 1 + cwd_width + usize::from(cwd_width > 0));
    let tree = if row.n_hidden_runs > 0 {
        "▸ "
    } else if !entry.children.is_empty() {
        "▾ "
    } else if entry.depth > 0 {
        "↳ "
    } else {
        "  "
    };
    let indent = format!("{}{tree}", "  ".repeat(entry.depth));
    let runs = if row.n_hidden_runs > 0 {
        format!(" +{}", row.n_hidden_runs)
    } else {
        String::new()
    };
    let mut title_spans = vec![Span::styled(indent.clone(), theme.dim())];
    let mut title_left = title_width.saturating_sub(text_width(&indent) + text_width(&runs));
    let fields = &entry.fields;
    let found = state
        .full_text
        .as_ref()
        .and_then(|full_text| full_text.texts.get(&row.entry));
    if let Some(found) = found {
        // A full-text hit shows the text it matched (after the name, when there is one), the
        // match marked: what the session said, not only that it said it.
        if entry.name().is_some() && title_left > 12 {
            let (name_spans, name_used) = segment(
                entry,
                &fields.name,
                marks,
                title_left / 3,
                false,
                theme.strong(),
                theme.matched(),
            );
            title_spans.extend(name_spans);
            title_left -= name_used;
            title_spans.push(Span::styled(" · ", theme.dim()));
            title_left -= 3;
        }
        let (found_spans, found_used) = found_spans(found, title_left, theme);
        title_spans.extend(found_spans);
        title_left -= found_used;
    } else if entry.name().is_some() {
        let (name_spans, name_used) = segment(
            entry,
            &fields.name,
            marks,
            title_left,
            false,
            theme.strong(),
            theme.matched(),
        );
        title_spans.extend(name_spans);
        title_left -= name_used;
        if entry.first_message().is_some() && title_left > 4 {
            title_spans.push(Span::styled(" · ", theme.dim()));
            title_left -= 3;
            let (first_spans, first_used) = segment(
                entry,
                &fields.first_message,
                marks,
                title_left,
                false,
                theme.dim(),
                theme.matched(),
            );
            title_spans.extend(first_spans);
            title_left -= first_used;
        }
    } else if entry.first_message().is_some() {
        let (first_spans, first_used) = segment(
            entry,
            &fields.first_message,
            marks,
            title_left,
            false,
            Style::new(),
            theme.matched(),
        );
        title_spans.extend(first_spans);
        title_left -= first_used;
    } else {
        let placeholder = if entry.has_summary {
            "(no message)"
        } else {
            "…"
        };
        let placeholder = fit(placeholder, title_left, false);
        title_left -= text_width(&placeholder);
        title_spans.push(Span::styled(placeholder, theme.dim()));
    }
    if !runs.is_empty() {
        title_spans.push(Span::styled(runs.clone(), theme.dim()));
    }
    title_spans.push(Span::raw(" ".repeat(title_left)));
    used += title_width;
    spans.extend(title_spans);
    spans.push(Span::raw(" "));
    used += 1;
    if cwd_width > 0 {
        let (cwd_spans, cwd_used) = segment(
            entry,
            &fields.cwd,
            marks,
            cwd_width,
            true,
            theme.dim(),
            theme.matched(),
        );
        spans.extend(cwd_spans);
        spans.push(Span::raw(" ".repeat(cwd_width - cwd_used + 1)));
        used += cwd_width + 1;
    }
    let id_range = fields.id.start..fields.id.start + id_width;
    let (id_spans, id_used) = segment(
        entry,
        &id_range,
        marks,
        id_width,
        false,
        theme.dim(),
        theme.matched(),
    );
    spans.extend(id_spans);
    used += id_used;
    if used < width {
        spans.push(Span::raw(" ".repeat(width - used)));
    }
    let line = Line::from(spans);
    if is_selected {
        line.patch_style(theme.selected())
    } else {
        line
    }
}

/// Returns the spans of a field of `entry`'s haystack fitted into `max_width` columns (cut at
/// the end with `…`, or at the start when `keep_end`), its matched characters in `mark`, and
/// the columns used.
fn segment(
    entry: &Entry,
    range: &std::ops::Range<usize>,
    marks: &[u32],
    max_width: usize,
    keep_end: bool,
    base: Style,
    mark: Style,
) -> (Vec<Span<'static>>, usize) {
    let text = entry.text(range);
    let mut cells: Vec<(char, bool)> = text
        .chars()
        .enumerate()
        .map(|(n, character)| {
            let position = u32::try_from(range.start + n).unwrap_or(u32::MAX);
            (character, marks.binary_search(&position).is_ok())
        })
        .collect();
    let total: usize = cells
        .iter()
        .map(|(character, _)| char_width(*character))
        .sum();
    if total > max_width {
        let budget = max_width.saturating_sub(1);
        let mut kept = Vec::new();
        let mut width = 0;
        let ordered: Box<dyn Iterator<Item = &(char, bool)>> = if keep_end {
            Box::new(cells.iter().rev())
        } else {
            Box::new(cells.iter())
        };
        for &(character, is_marked) in ordered {
            let character_width = char_width(character);
            if width + character_width > budget {
                break;
            }
            width += character_width;
            kept.push((character, is_marked));
        }
        if keep_end {
            kept.reverse();
        }
        if max_width > 0 {
            if keep_end {
                kept.insert(0, ('…', false));
            } else {
                kept.push(('…', false));
            }
        }
        cells = kept;
    }
    let mut spans = Vec::new();
    let mut used = 0;
    let mut run = String::new();
    let mut run_marked = false;
    for (character, is_marked) in cells {
        if is_marked != run_marked && !run.is_empty() {
            let style = if run_marked { base.patch(mark) } else { base };
            spans.push(Span::styled(std::mem::take(&mut run), style));
        }
        run_marked = is_marked;
        used += char_width(character);
        run.push(character);
    }
    if !run.is_empty() {
        let style = if run_marked { base.patch(mark) } else { base };
        spans.push(Span::styled(run, style));
    }
    (spans, used)
}

fn draw_preview(frame: &mut Frame<'_>, pane: Pane, state: &State, context: &ViewContext<'_>) {
    let theme = context.theme;
    let (area, block) = match pane {
        Pane::Side(area) => (area, Block::new().borders(Borders::LEFT)),
        Pane::Below(area) => (area, Block::new().borders(Borders::TOP)),
    };
    let inner = block.inner(area);
    frame.render_widget(block.border_style(theme.dim()), area);
    let Some(idx) = state.selected_entry() else {
        return;
    };
    let inner = Rect {
        x: inner.x + 1,
        width: inner.width.saturating_sub(1),
        ..inner
    };
    let width = usize::from(inner.width).max(1);
    let entry = &state.index.entries[idx];
    let preview = match state.previews.get(&entry.path) {
        Some(PreviewSlot::Ready(preview)) => Some(preview.as_ref()),
        _ => None,
    };
    let head = preview_head(entry, preview, width, context);
    let mut tail: Vec<Line<'_>> = Vec::new();
    match state.previews.get(&entry.path) {
        Some(PreviewSlot::Ready(preview)) => preview_messages(&mut tail, preview, width, context),
        Some(PreviewSlot::Failed(reason)) => {
            for line in wrap_columns(&field(reason), width) {
                tail.push(Line::styled(line, theme.warning()));
            }
        }
        Some(PreviewSlot::Loading) | None => tail.push(Line::styled("reading…", theme.dim())),
    }
    let height = usize::from(inner.height);
    // The facts give way, least useful first, so that some messages always show.
    let head_room = height.saturating_sub(tail.len().min(6)).max(2.min(height));
    let mut order: Vec<usize> = (0..head.len()).collect();
    order.sort_by_key(|&n| head[n].0);
    let kept: std::collections::HashSet<usize> = order.into_iter().take(head_room).collect();
    let mut lines: Vec<Line<'_>> = head
        .into_iter()
        .enumerate()
        .filter(|(n, _)| kept.contains(n))
        .map(|(_, (_, line))| line)
        .collect();
    let room = height - lines.len().min(height);
    if tail.len() > room {
        // The newest messages matter most: keep the end.
        let cut = tail.len() - room;
        tail.drain(..cut);
        if let Some(first) = tail.first_mut() {
            *first = Line::styled("…", theme.dim());
        }
    }
    lines.extend(tail);
    frame.render_widget(Paragraph::new(lines), inner);
}

/// Returns the facts at the top of the preview, each with its priority (lower stays longer
/// when the pane is short): title, times, counts and cost, models, cwd, id, runs.
fn preview_head<'a>(
    entry: &'a Entry,
    preview: Option<&'a Preview>,
    width: usize,
    context: &ViewContext<'_>,
) -> Vec<(u8, Line<'a>)> {
    let theme = context.theme;
    let label = |name: &str| Span::styled(format!("{name:<9}"), theme.dim());
    let mut head = Vec::new();
    let title = entry
        .name()
        .or(entry.first_message())
        .unwrap_or("(no message)");
    let title = fit(title, width, false);
    head.push((0, Line::styled(title, theme.strong())));
    let started = local_time(&entry.timestamp, context.time_zone);
    let started: String = started.chars().take(16).collect();
    let mut times = vec![label("started"), Span::raw(started.clone())];
    if let Some(last) = preview.and_then(|preview| preview.last_activity.as_deref()) {
        let last: String = local_time(last, context.time_zone)
            .chars()
            .take(16)
            .collect();
        let last = match last.strip_prefix(&started[..started.len().min(11)]) {
            Some(time) if started.len() >= 11 => time.to_owned(),
            _ => last,
        };
        times.push(Span::styled(" · active ", theme.dim()));
        times.push(Span::raw(last));
    }
    head.push((1, Line::from(times)));
    head.push((
        4,
        Line::from(vec![label("cwd"), Span::raw(entry.cwd_text())]),
    ));
    head.push((
        5,
        Line::from(vec![label("id"), Span::raw(entry.id.as_str())]),
    ));
    let Some(preview) = preview else {
        return head;
    };
    if !preview.models.is_empty() {
        let models: Vec<String> = preview
            .models
            .iter()
            .map(|model| pi_retrospect_render::text::one_line(model, usize::MAX))
            .collect();
        head.push((
            3,
            Line::from(vec![label("models"), Span::raw(models.join(", "))]),
        ));
    }
    let count = |role: &str| preview.messages_by_role.get(role).copied().unwrap_or(0);
    let n_other: u64 = preview
        .messages_by_role
        .iter()
        .filter(|(role, _)| !matches!(role.as_str(), "user" | "assistant" | "toolResult"))
        .map(|(_, n)| n)
        .sum();
    let n_tool_results = count("toolResult");
    let mut counts = format!(
        "{} user · {} assistant · {n_tool_results} tool result{}",
        count("user"),
        count("assistant"),
        if n_tool_results == 1 { "" } else { "s" }
    );
    if n_other > 0 {
        counts.push_str(&format!(" · {n_other} other"));
    }
    head.push((2, Line::from(vec![label("messages"), Span::raw(counts)])));
    if let Some(usage) = &preview.usage {
        let tokens = thousands(usize::try_from(usage.total).unwrap_or(usize::MAX));
        let cost = if usage.is_cost_known() {
            format!("${:.4} · {tokens} tokens", usage.cost)
        } else if usage.cost > 0.0 {
            format!("at least ${:.4} · {tokens} tokens", usage.cost)
        } else {
            format!("not recorded · {tokens} tokens")
        };
        head.push((2, Line::from(vec![label("cost"), Span::raw(cost)])));
    }
    if !entry.children.is_empty() {
        head.push((
            6,
            Line::from(vec![
                label("runs"),
                Span::raw(format!("{} (→ lists them)", entry.children.len())),
            ]),
        ));
    }
    head
}

/// Pushes the latest messages, each under its role and time, wrapped to `width`.
fn preview_messages<'a>(
    lines: &mut Vec<Line<'a>>,
    preview: &'a Preview,
    width: usize,
    context: &ViewContext<'_>,
) {
    let theme = context.theme;
    if preview.messages.is_empty() {
        lines.push(Line::styled("(no messages)", theme.dim()));
        return;
    }
    let rule = format!(
        "── last {} of {} messages ",
        preview.messages.len(),
        preview.n_messages_available
    );
    lines.push(Line::styled(fit(&rule, width, false), theme.dim()));
    for message in &preview.messages {
        let is_user = message.role == pi_retrospect_app::picker::HandoffRole::User;
        let when = message
            .timestamp
            .as_deref()
            .map(|stored| local_time(stored, context.time_zone))
            .map(|time| time.chars().skip(11).take(5).collect::<String>())
            .unwrap_or_default();
        lines.push(Line::from(vec![
            Span::styled(message.role.as_str(), theme.role(is_user)),
            Span::styled(format!(" {when}"), theme.dim()),
        ]));
        let text = pi_retrospect_render::text::clean(&message.text).replace('\t', "    ");
        for paragraph in text.lines() {
            let folded: String = paragraph.trim_end().to_owned();
            if folded.is_empty() {
                continue;
            }
            for line in wrap_columns(&folded, width) {
                lines.push(Line::raw(line));
            }
        }
        if message.is_cut {
            lines.push(Line::styled("[…]", theme.dim()));
        }
    }
}

fn draw_keys(frame: &mut Frame<'_>, area: Rect, state: &State, theme: Theme) {
    if let Some(status) = &state.status {
        let status = format!(" {}", field(status));
        let line = Line::styled(
            fit(&status, usize::from(area.width), false),
            theme.warning(),
        );
        frame.render_widget(Paragraph::new(line), area);
        return;
    }
    let enter = if state.is_print { "print" } else { "resume" };
    let scope = match state.scope {
        Scope::Here => "all",
        Scope::All => "here",
    };
    let keys = [
        ("↑↓", "move"),
        ("→←", "runs"),
        ("Tab", scope),
        ("^F", "full text"),
        ("^O", "read"),
        ("Enter", enter),
        ("Esc", "quit"),
    ];
    let mut spans = vec![Span::raw(" ")];
    let mut used = 1;
    for (key, action) in keys {
        let width = text_width(key) + 1 + text_width(action) + 2;
        if used + width > usize::from(area.width) {
            break;
        }
        used += width;
        spans.push(Span::styled(key, theme.strong()));
        spans.push(Span::styled(format!(" {action}  "), theme.dim()));
    }
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}

/// Draws the question asked before resuming a session recorded in another directory: Pi
/// resumes it there (y), or it is forked into here (f), or not (n). Six lines, so that it
/// fits the smallest terminal drawn in.
fn draw_confirm(frame: &mut Frame<'_>, area: Rect, cwd: &str, theme: Theme) {
    let width = area.width.saturating_sub(4).min(72);
    let inner_width = usize::from(width.saturating_sub(4));
    let choice = |key: &'static str, text: &'static str| {
        Line::from(vec![Span::styled(key, theme.strong()), Span::raw(text)])
    };
    let lines = vec![
        Line::raw(fit("Pi resumes this session in", inner_width, false)),
        Line::styled(
            format!(
                "  {}",
                fit(&field(cwd), inner_width.saturating_sub(2), true)
            ),
            theme.strong(),
        ),
        Line::raw(fit("(not here)", inner_width, false)),
        choice("y", " resume it there"),
        choice("f", " fork it into this directory"),
        choice("n", " cancel"),
    ];
    let height = u16::try_from(lines.len()).unwrap_or(u16::MAX) + 2;
    let popup = area.centered(Constraint::Length(width), Constraint::Length(height));
    frame.render_widget(Clear, popup);
    let block = Block::bordered().title(" Resume in Pi ");
    frame.render_widget(
        Paragraph::new(lines).block(block.padding(ratatui::widgets::Padding::horizontal(1))),
        popup,
    );
}

/// Returns the spans of a full-text hit's text fitted into `max_width` columns as `search`
/// fits a hit's line (the match kept in view) with the match marked, and the columns used.
fn found_spans(found: &FoundText, max_width: usize, theme: Theme) -> (Vec<Span<'static>>, usize) {
    let snippet = &found.snippet;
    let (before, matched, after) = match (
        snippet.get(..found.range.start),
        snippet.get(found.range.clone()),
        snippet.get(found.range.end..),
    ) {
        (Some(before), Some(matched), Some(after)) => (before, matched, after),
        _ => ("", "", snippet.as_str()),
    };
    let [before, matched, after] =
        pi_retrospect_render::search::fit_around_match(before, matched, after, Some(max_width));
    let used = text_width(&before) + text_width(&matched) + text_width(&after);
    let spans = vec![
        Span::styled(before, theme.dim()),
        Span::styled(matched, theme.matched()),
        Span::styled(after, theme.dim()),
    ];
    (spans, used)
}

/// Returns `text` cut to `max_width` columns, with `…` at the end (or the start when
/// `keep_end`).
fn fit(text: &str, max_width: usize, keep_end: bool) -> String {
    if text_width(text) <= max_width {
        return text.to_owned();
    }
    if max_width == 0 {
        return String::new();
    }
    let budget = max_width - 1;
    let mut width = 0;
    let mut kept: Vec<char> = Vec::new();
    let characters: Box<dyn Iterator<Item = char>> = if keep_end {
        Box::new(text.chars().rev())
    } else {
        Box::new(text.chars())
    };
    for character in characters {
        let character_width = char_width(character);
        if width + character_width > budget {
            break;
        }
        width += character_width;
        kept.push(character);
    }
    if keep_end {
        kept.reverse();
        format!("…{}", kept.into_iter().collect::<String>())
    } else {
        format!("{}…", kept.into_iter().collect::<String>())
    }
}

/// Returns `text` (one line, already safe) broken into lines of at most `width` terminal
/// columns, at spaces where it can be, within words where it must. Columns, not characters:
/// a CJK character or an emoji takes two, and a line of them cut by characters would run
/// past the pane and lose its end.
fn wrap_columns(text: &str, width: usize) -> Vec<String> {
    // Room for one wide character, so that every line takes at least one.
    let width = width.max(2);
    let mut lines = Vec::new();
    let mut line = String::new();
    let mut used = 0;
    for word in text.split(' ') {
        if used > 0 && used + 1 + text_width(word) > width {
            lines.push(std::mem::take(&mut line));
            used = 0;
        }
        if used > 0 {
            line.push(' ');
            used += 1;
        }
        for character in word.chars() {
            let character_width = char_width(character);
            if used > 0 && used + character_width > width {
                lines.push(std::mem::take(&mut line));
                used = 0;
            }
            line.push(character);
            used += character_width;
        }
    }
    if !line.is_empty() || lines.is_empty() {
        lines.push(line);
    }
    lines
}

fn char_width(character: char) -> usize {
    character.width().unwrap_or(0)
}

fn text_width(text: &str) -> usize {
    text.chars().map(char_width).sum()
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::path::Path;

    use pi_retrospect_app::picker::{HandoffMessage, HandoffRole};
    use pi_retrospect_core::stats::Usage;
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;
    use ratatui::buffer::Buffer;
    use ratatui::crossterm::event::KeyCode;

    use super::*;
    use crate::state::tests::{ctrl, key, sample_state, typed};

    /// Returns the preview of a sample session: two models, usage, three messages (one with a
    /// bidi override and a tab, which must not reach the screen as such).
    fn sample_preview(path: &str) -> Preview {
        let message = |role, minute: u32, text: &str| HandoffMessage {
            entry_id: format!("e{minute}"),
            role,
            timestamp: Some(format!("2026-11-30T10:{minute:02}:00.000Z")),
            model: None,
            text: text.to_owned(),
            is_cut: false,
            n_bytes: text.len(),
        };
        Preview {
            path: path.to_owned(),
            session_id: None,
            name: None,
            cwd: Some("/w".to_owned()),
            first_activity: Some("2026-11-30T10:00:08.000Z".to_owned()),
            last_activity: Some("2026-11-30T10:42:00.000Z".to_owned()),
            models: vec![
                "anthropic/claude-sonnet-4-5".to_owned(),
                "openai/gpt-5".to_owned(),
            ],
            messages_by_role: BTreeMap::from([
                ("assistant".to_owned(), 12),
                ("toolResult".to_owned(), 30),
                ("user".to_owned(), 5),
            ]),
            n_entries: 60,
            usage: Some(Usage {
                total: 123_456,
                cost: 0.4321,
                n_entries: 12,
                ..Usage::default()
            }),
            messages: vec![
                message(
                    HandoffRole::User,
                    40,
                    "bump every dependency\u{202e} and\trun the tests",
                ),
                message(
                    HandoffRole::Assistant,
                    41,
                    "Done: 14 crates bumped.\n\nAll 212 tests pass; clippy is clean.",
                ),
                message(HandoffRole::User, 42, "thanks"),
            ],
            n_messages_available: 17,
        }
    }

    /// Returns the screen as text, then a line `--- styles`, then one line per row marking
    /// each cell: `m` matched, `r` selected (reversed), `c` coloured, `b` bold, `d` dim.
    fn screen(buffer: &Buffer) -> String {
        let area = buffer.area;
        let mut text = String::new();
        let mut styles = String::new();
        for y in 0..area.height {
            for x in 0..area.width {
                let cell = &buffer[(x, y)];
                text.push_str(cell.symbol());
                let modifier = cell.modifier;
                let mark = if cell.fg == Color::Yellow || modifier.contains(Modifier::UNDERLINED) {
                    'm'
                } else if modifier.contains(Modifier::REVERSED) {
                    'r'
                } else if cell.fg != Color::Reset {
                    'c'
                } else if modifier.contains(Modifier::BOLD) {
                    'b'
                } else if modifier.contains(Modifier::DIM) {
                    'd'
                } else {
                    ' '
                };
                styles.push(mark);
            }
            text.push_str("|\n");
            styles.push_str("|\n");
        }
        format!("{text}--- styles\n{styles}")
    }

    /// Draws `state` at `width`x`height` and compares the screen with
    /// `golden/<name>.txt`; `BLESS=1` rewrites the file.
    fn check(name: &str, state: &mut State, width: u16, height: u16, is_color: bool) {
        let mut terminal = Terminal::new(TestBackend::new(width, height)).expect("test terminal");
        let context = ViewContext {
            theme: Theme {
                paint: pi_retrospect_render::Paint { is_on: is_color },
            },
            time_zone: &jiff::tz::TimeZone::UTC,
        };
        terminal
            .draw(|frame| draw(frame, state, &context))
            .expect("drawn");
        let actual = screen(terminal.backend().buffer());
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("golden")
            .join(format!("{name}.txt"));
        if std::env::var_os("BLESS").is_some() {
            std::fs::create_dir_all(path.parent().expect("golden dir")).expect("mkdir");
            std::fs::write(&path, &actual).expect("bless");
            return;
        }
        let expected = std::fs::read_to_string(&path)
            .unwrap_or_else(|error| panic!("{}: {error} (BLESS=1 writes it)", path.display()));
        assert_eq!(
            actual, expected,
            "{name}: screen differs (BLESS=1 rewrites it)"
        );
    }

    fn with_preview(state: &mut State) {
        let path = state.selected_path().expect("a selection").to_owned();
        let preview = sample_preview(&path);
        state.preview_read(path, PreviewSlot::Ready(Box::new(preview)));
    }

    /// Selects the session of `/x` and asks whether to resume it there (as Enter does when
    /// that directory exists, which `/x` does not in tests).
    fn ask(state: &mut State) {
        press(state, &[key(KeyCode::Tab), key(KeyCode::Down)]);
        state.mode = Mode::Confirm {
            path: state.selected_path().expect("a selection").to_owned(),
            cwd: "/x".to_owned(),
        };
    }

    fn press(state: &mut State, keys: &[ratatui::crossterm::event::KeyEvent]) {
        for &key in keys {
            state.handle_key(key);
        }
    }

    #[test]
    fn screens() {
        type Setup = fn(&mut State);
        // (golden name, width, height, colour, what is done first)
        let cases: [(&str, u16, u16, bool, Setup); 11] = [
            ("here_80x24", 80, 24, true, |state| with_preview(state)),
            ("all_filtered_80x24", 80, 24, true, |state| {
                press(state, &[key(KeyCode::Tab)]);
                press(state, &typed("parser"));
            }),
            ("all_filtered_no_color_80x24", 80, 24, false, |state| {
                press(state, &[key(KeyCode::Tab)]);
                press(state, &typed("parser"));
                with_preview(state);
            }),
            ("expanded_120x30", 120, 30, true, |state| {
                press(
                    state,
                    &[key(KeyCode::Tab), key(KeyCode::End), key(KeyCode::Right)],
                );
                press(state, &[key(KeyCode::Right), key(KeyCode::Right)]);
                with_preview(state);
            }),
            ("confirm_80x24", 80, 24, true, |state| ask(state)),
            ("full_text_80x24", 80, 24, true, |state| {
                press(state, &typed("needle"));
                press(state, &[ctrl('f')]);
                state.search_started(1, 8);
                let found = crate::state::FoundText {
                    snippet: "… the needle is in the haystack, near the end of a long line"
                        .to_owned(),
                    range: 6..12,
                };
                state.search_progress(
                    1,
                    &[("/s/0003cccc.jsonl".to_owned(), Some(found))],
                    4,
                    false,
                );
            }),
            ("loading_80x24", 80, 24, true, |state| {
                *state = State::new(
                    crate::index::Index::default(),
                    "/w".to_owned(),
                    crate::state::Scope::Here,
                    true,
                );
            }),
            ("status_80x24", 80, 24, true, |state| {
                press(state, &[ctrl('f')])
            }),
            ("too_small_30x6", 30, 6, true, |_| {}),
            ("confirm_40x8", 40, 8, false, |state| ask(state)),
            ("smallest_40x8", 40, 8, false, |state| {
                press(state, &typed("the parser drops lines when"));
                press(state, &[ctrl('f')]);
            }),
        ];
        for (name, width, height, is_color, setup) in cases {
            let mut state = sample_state(false);
            state.loading.n_summaries_total = state.loading.n_summaries_done;
            setup(&mut state);
            check(name, &mut state, width, height, is_color);
        }
    }

    /// A key in a session's name or first message reaches neither its
    /// list row nor the preview's title line; both show the preview's redaction marker.
    #[test]
    fn list_rows_and_the_preview_title_redact_credentials() {
        let key = "sk-ant-api03-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA";
        let mut state = sample_state(false);
        let path = state.selected_path().expect("a selection").to_owned();
        state.add_summaries(&[(
            path,
            pi_retrospect_core::SessionSummary {
                name: None,
                first_user_message: Some(format!("my key is {key} ok")),
                last_activity: None,
                last_activity_unknown: None,
            },
        )]);
        with_preview(&mut state);
        let mut terminal = Terminal::new(TestBackend::new(160, 30)).expect("test terminal");
        let context = ViewContext {
            theme: Theme {
                paint: pi_retrospect_render::Paint::OFF,
            },
            time_zone: &jiff::tz::TimeZone::UTC,
        };
        terminal
            .draw(|frame| draw(frame, &mut state, &context))
            .expect("drawn");
        let text = screen(terminal.backend().buffer());
        assert!(!text.contains("sk-ant"), "{text}");
        let marked = text
            .matches("my key is [redacted: anthropic-api-key] ok")
            .count();
        assert_eq!(marked, 2, "the row and the title: {text}");
    }

    /// The preview wraps by columns, so no wide character is clipped.
    #[test]
    fn wrapping_counts_columns() {
        let sentence = "这是一个很长的中文句子用于测试预览窗格的换行是否正确处理宽字符";
        let text = format!("{sentence}{sentence}{sentence}结束END 👍 done");
        // (text, width, expected lines)
        let cases: [(&str, usize, Vec<&str>); 4] = [
            ("日本語のテキスト", 6, vec!["日本語", "のテキ", "スト"]),
            ("日本語のテキスト", 5, vec!["日本", "語の", "テキ", "スト"]),
            ("ab 日本 cd", 5, vec!["ab", "日本", "cd"]),
            ("👍👍 ok", 4, vec!["👍👍", "ok"]),
        ];
        for (text, width, expected) in cases {
            assert_eq!(wrap_columns(text, width), expected, "{text} {width}");
        }
        for width in [1, 2, 3, 7, 40, 79] {
            let lines = wrap_columns(&text, width);
            assert!(
                lines.iter().all(|line| text_width(line) <= width.max(2)),
                "{width}: {lines:?}"
            );
            assert_eq!(lines.join("").replace(' ', ""), text.replace(' ', ""));
        }
        // Drawn: the end of the message is on screen.
        let mut state = sample_state(false);
        let path = state.selected_path().expect("a selection").to_owned();
        let mut preview = sample_preview(&path);
        preview.messages.truncate(1);
        preview.messages[0].text = text.clone();
        state.preview_read(path, PreviewSlot::Ready(Box::new(preview)));
        let mut terminal = Terminal::new(TestBackend::new(80, 30)).expect("test terminal");
        let context = ViewContext {
            theme: Theme {
                paint: pi_retrospect_render::Paint::OFF,
            },
            time_zone: &jiff::tz::TimeZone::UTC,
        };
        terminal
            .draw(|frame| draw(frame, &mut state, &context))
            .expect("drawn");
        let drawn: String = terminal
            .backend()
            .buffer()
            .content()
            .iter()
            .map(|cell| cell.symbol())
            .collect();
        for character in text.chars().filter(|character| *character != ' ') {
            let n_drawn = drawn.matches(character).count();
            assert!(
                n_drawn >= text.matches(character).count(),
                "{character} lost"
            );
        }
    }

    #[test]
    fn fitting_cuts_by_columns() {
        // (text, width, keep end, expected)
        let cases = [
            ("abcdef", 6, false, "abcdef"),
            ("abcdef", 4, false, "abc…"),
            ("abcdef", 4, true, "…def"),
            ("日本語のテキスト", 7, false, "日本語…"),
            ("abc", 0, false, ""),
        ];
        for (text, width, keep_end, expected) in cases {
            assert_eq!(fit(text, width, keep_end), expected, "{text} {width}");
            assert!(text_width(&fit(text, width, keep_end)) <= width);
        }
    }
}
