package io.nccltuner.compile;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nccltuner.compile.Compiler.Compilation;
import io.nccltuner.policy.Algorithm;
import io.nccltuner.policy.Collective;
import io.nccltuner.policy.Policy.Range;
import io.nccltuner.policy.Protocol;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * Issue 21, item 7: compile's HTML chart drew its clipped-busbw note inside the plot, over the
 * points at its lower left (a small size's low busbw sits there). The note now stands in the margin
 * above the plot (the plot's frame starts at y 30 of the viewBox), and a legend of many
 * configurations makes the chart taller instead of running below its frame.
 */
class HtmlReportLayoutTest {
    private static final Range ONE = Range.exactly(1);
    private static final Pattern VIEW_BOX = Pattern.compile("viewBox=\"0 0 1200 (\\d+)\"");
    private static final Pattern FRAME = Pattern.compile(
            "<rect x=\"80\" y=\"30\" width=\"890\" height=\"(\\d+)\" fill=\"#fafafa\" stroke=\"#999\"/>");

    /** Sizes 1 KiB .. 1 MiB of NCCL's own pick, RING/SIMPLE and TREE/SIMPLE; TREE/SIMPLE at 32 KiB 1e-300 us. */
    private static Compilation clipped() throws Exception {
        MeasurementSet data = new MeasurementSet();
        RunConfig ring = new RunConfig(Algorithm.RING, Protocol.SIMPLE, 0);
        RunConfig tree = new RunConfig(Algorithm.TREE, Protocol.SIMPLE, 0);
        for (int k = 0; k <= 10; k++) {
            long size = 1024L << k;
            double t = 10 + size / 20000.0;
            data.add(new Measurement("c:" + k, Collective.AllReduce, 2, 2, ONE, size, RunConfig.AUTO, t));
            data.add(new Measurement("r:" + k, Collective.AllReduce, 2, 2, ONE, size, ring, t * 0.8));
            data.add(new Measurement("t:" + k, Collective.AllReduce, 2, 2, ONE, size, tree, k == 5 ? 1e-300 : t * 0.9));
        }
        return Compiler.compile(data, Compiler.Options.defaults("clipped"));
    }

    @Test
    void theClippedBusbwNoteStandsAboveThePlotNotOnIt() throws Exception {
        String html = HtmlReport.render(clipped(), List.of());
        Matcher note = Pattern.compile("<text x=\"([0-9.]+)\" y=\"([0-9.]+)\" text-anchor=\"start\">busbw outside "
                        + "[^<]*B/s drawn on the chart's edge</text>")
                .matcher(html);
        assertTrue(note.find(), html);
        assertEquals(80.0, Double.parseDouble(note.group(1)), "at the plot's left edge");
        assertEquals(20.0, Double.parseDouble(note.group(2)), "its baseline 10 units above the plot's top (y 30)");
        // every point of the chart lies inside the plot's frame, below the note
        Matcher frame = FRAME.matcher(html);
        assertTrue(frame.find(), html);
        Matcher cy = Pattern.compile(" cy=\"([0-9.]+)\"").matcher(html);
        int points = 0;
        while (cy.find()) {
            double y = Double.parseDouble(cy.group(1));
            assertTrue(y >= 30 && y <= 30 + Integer.parseInt(frame.group(1)), "point at y " + y);
            points++;
        }
        assertTrue(points >= 33, "the three series' points and NCCL's rings: " + points);
    }

    @Test
    void aLongLegendMakesTheChartTallerInsteadOfRunningBelowIt() throws Exception {
        MeasurementSet data = new MeasurementSet();
        List<RunConfig> configs = new ArrayList<>();
        for (Algorithm a : List.of(Algorithm.RING, Algorithm.TREE)) {
            for (Protocol p : Protocol.values()) {
                for (int ch = 1; ch <= 5; ch++) {
                    configs.add(new RunConfig(a, p, ch));
                }
            }
        }
        assertEquals(30, configs.size());
        for (int k = 0; k < 4; k++) {
            long size = 1024L << k;
            data.add(new Measurement("c:" + k, Collective.AllReduce, 2, 2, ONE, size, RunConfig.AUTO, 20.0));
            for (int i = 0; i < configs.size(); i++) {
                data.add(new Measurement(
                        "x:" + k + ":" + i, Collective.AllReduce, 2, 2, ONE, size, configs.get(i), 10.0 + i));
            }
        }
        String html = HtmlReport.render(Compiler.compile(data, Compiler.Options.defaults("many")), List.of());
        Matcher vb = VIEW_BOX.matcher(html);
        assertTrue(vb.find(), html);
        int height = Integer.parseInt(vb.group(1));
        // 30 above the plot, a legend line of 18 per configuration, NCCL's, the policy's and three note lines
        assertEquals(30 + 92 + 18 * 30, height);
        Matcher last = Pattern.compile(
                        "<text x=\"982.0\" y=\"([0-9.]+)\" text-anchor=\"start\">neighbouring sizes</text>")
                .matcher(html);
        assertTrue(last.find(), html);
        assertTrue(
                Double.parseDouble(last.group(1)) <= height - 8,
                "the legend's last line inside the chart: " + last.group(1) + " of " + height);
        Matcher frame = FRAME.matcher(html);
        assertTrue(frame.find(), html);
        assertEquals(height - 30 - 60, Integer.parseInt(frame.group(1)), "the plot grows with the chart");
    }
}
