package io.nccltuner.model;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * A plain-text table with aligned columns, for command output. Cells are strings; a column is
 * right-aligned (numbers) or left-aligned (names); columns are separated by two spaces and trailing
 * blanks are trimmed.
 */
public final class TextTable {
    private final String[] headers;
    private final boolean[] rightAligned;
    private final List<String[]> rows = new ArrayList<>();

    /**
     * @param headers column headers; a header starting with '>' is right-aligned (the '>' is not
     *     printed)
     */
    public TextTable(String... headers) {
        this.headers = new String[headers.length];
        this.rightAligned = new boolean[headers.length];
        for (int i = 0; i < headers.length; i++) {
            rightAligned[i] = headers[i].startsWith(">");
            this.headers[i] = rightAligned[i] ? headers[i].substring(1) : headers[i];
        }
    }

    /**
     * Adds a row.
     *
     * @param cells one cell per column; null prints as empty
     * @return this table
     * @throws IllegalArgumentException if the number of cells differs from the number of columns
     */
    public TextTable row(String... cells) {
        if (cells.length != headers.length) {
            throw new IllegalArgumentException(cells.length + " cells for " + headers.length + " columns");
        }
        rows.add(Arrays.stream(cells).map(c -> c == null ? "" : c).toArray(String[]::new));
        return this;
    }

    /** @return the number of rows added */
    public int size() {
        return rows.size();
    }

    /** @return the table, header first, each line ending in a newline */
    public String render() {
        int[] w = new int[headers.length];
        for (int i = 0; i < headers.length; i++) {
            w[i] = headers[i].length();
            for (String[] r : rows) {
                w[i] = Math.max(w[i], r[i].length());
            }
        }
        StringBuilder sb = new StringBuilder();
        line(sb, headers, w);
        for (String[] r : rows) {
            line(sb, r, w);
        }
        return sb.toString();
    }

    private void line(StringBuilder sb, String[] cells, int[] w) {
        StringBuilder l = new StringBuilder();
        for (int i = 0; i < cells.length; i++) {
            if (i > 0) {
                l.append("  ");
            }
            String pad = " ".repeat(w[i] - cells[i].length());
            l.append(rightAligned[i] ? pad + cells[i] : cells[i] + pad);
        }
        sb.append(l.toString().stripTrailing()).append('\n');
    }
}
