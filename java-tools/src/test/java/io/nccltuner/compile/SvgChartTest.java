package io.nccltuner.compile;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import org.junit.jupiter.api.Test;

/** The pieces the three HTML charts share: the axes' arithmetic and the report charts' elements. */
class SvgChartTest {
    /** The shadow report's regret chart: viewBox 1000 x 320, plot 920 x 250 from (60, 20). */
    static final SvgChart REGRET = new SvgChart(1000, 320, 60, 20, 20, 50);

    @Test
    void sizeAxisIsLog2OfTheBytesOnThePlotsWidth() {
        assertEquals(16.0, SvgChart.log2Size(65536), 1e-12, "64 KiB");
        assertEquals(0.0, SvgChart.log2Size(0), "below 1 byte counts as 1 byte");
        assertEquals(920, REGRET.plotWidth());
        assertEquals(250, REGRET.plotHeight());
        assertEquals(60.0, REGRET.x(10, 10, 14), "the axis's start at the plot's left edge");
        assertEquals(520.0, REGRET.x(12, 10, 14), "4 KiB halfway from 1 KiB to 16 KiB");
        assertEquals(980.0, REGRET.x(14, 10, 14), "its end at the right edge");
    }

    @Test
    void decadeTicksAreOneTwoFiveWithinTheAxis() {
        // log10 0.3 .. 2.0: 1 lies below (log10 1 = 0), 200 above (2.3); 100 is the end itself
        assertEquals(List.of(2.0, 5.0, 10.0, 20.0, 50.0, 100.0), SvgChart.decadeTicks(0.3, 2.0));
        // below 1 too; 1, 2 and 5 would give two ticks (0.5, 1), so the finer 1 .. 9 x 10^k
        assertEquals(List.of(0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0), SvgChart.decadeTicks(-0.5, 0.1), "below 1 too");
    }

    @Test
    void reportChartElements() {
        assertEquals(
                "<svg class=\"chart\" viewBox=\"0 0 1000 320\" xmlns=\"http://www.w3.org/2000/svg\" role=\"img\" "
                        + "aria-label=\"regret by size\">\n",
                REGRET.open("chart", "regret by size"));
        assertEquals(
                "<line x1=\"60\" y1=\"100.0\" x2=\"980\" y2=\"100.0\" stroke=\"#eee\"/>\n"
                        + "<text x=\"56\" y=\"104.0\" font-size=\"11\" text-anchor=\"end\">5%</text>\n",
                REGRET.gridLine(100, "5%"));
        assertEquals(
                "<text x=\"520.0\" y=\"286\" font-size=\"11\" text-anchor=\"middle\">64 KiB</text>\n",
                REGRET.sizeLabel(520, 65536));
        assertEquals(
                "<text x=\"520\" y=\"312\" font-size=\"12\" text-anchor=\"middle\">message size (bytes, log scale)</text>\n"
                        + "<text x=\"14\" y=\"145\" font-size=\"12\" text-anchor=\"middle\" transform=\"rotate(-90 14 145)\">"
                        + "regret &lt; 5%</text>\n",
                REGRET.axisTitles("message size (bytes, log scale)", 14, "regret < 5%"));
        assertEquals("a&lt;b &amp; &quot;c&quot;&gt;", SvgChart.esc("a<b & \"c\">"));
    }
}
