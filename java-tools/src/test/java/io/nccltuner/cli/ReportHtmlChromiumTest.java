package io.nccltuner.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.awt.image.BufferedImage;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The report page in a real browser: tests/html/check_report.sh renders it in headless Chromium;
 * the screenshot must show the regret chart across the page's width (its red NCCL line reaches from
 * the left to the right of the 1200-pixel window) with the policy's blue dots at the decided sizes
 * only; under it the report's busbw chart (its own colours: NCCL's orange and best measured's green
 * lines across the page, the policy's purple dots at the 2 decided sizes); compile's busbw chart
 * must span the page too; the canary page must show
 * both arms' markers, NCCL's red and the policy's blue, at each of its five sizes. Skipped where
 * Chromium is not installed (the script exits 3; tests/html/install_chromium.sh, which the
 * Makefile's unit-test runs first, installs it as root).
 */
@Timeout(180)
class ReportHtmlChromiumTest {
    @TempDir
    Path tmp;

    @Test
    void chartSpansThePageInChromium() throws Exception {
        Path html = tmp.resolve("r.html");
        CliRun r = CliRun.run(
                "report",
                ReportCommandTest.res("rank-a.jsonl"),
                ReportCommandTest.res("rank-b.jsonl"),
                "--measurements",
                CliRun.fixture("h200-2rank-sweep_allreduce.rep1.csv"),
                "--html",
                html.toString());
        assertEquals(Main.EXIT_CHECK, r.exit(), "a:1 and b:2 decide differently at 16 KiB; the page is written first");
        Path png = tmp.resolve("r.png");
        Path script = Path.of(System.getProperty("nccltj.repo", "..")).resolve("tests/html/check_report.sh");
        Process p = new ProcessBuilder("bash", script.toString(), html.toString(), png.toString())
                .redirectErrorStream(true)
                .start();
        String out = new String(p.getInputStream().readAllBytes());
        assertTrue(p.waitFor(150, TimeUnit.SECONDS), "chromium finished");
        Assumptions.assumeTrue(p.exitValue() != 3, "chromium is not installed");
        assertEquals(0, p.exitValue(), out);
        BufferedImage img = ImageIO.read(png.toFile());
        assertEquals(1200, img.getWidth());
        int minBlue = Integer.MAX_VALUE;
        int maxBlue = -1;
        int minRed = Integer.MAX_VALUE;
        int maxRed = -1;
        for (int y = 0; y < img.getHeight(); y++) {
            for (int x = 0; x < img.getWidth(); x++) {
                int rgb = img.getRGB(x, y) & 0xffffff;
                if (near(rgb, 0x1565c0)) {
                    minBlue = Math.min(minBlue, x);
                    maxBlue = Math.max(maxBlue, x);
                } else if (near(rgb, 0xc62828)) {
                    minRed = Math.min(minRed, x);
                    maxRed = Math.max(maxRed, x);
                }
            }
        }
        System.out.println("ReportHtmlChromiumTest: policy line x " + minBlue + ".." + maxBlue + ", NCCL line x "
                + minRed + ".." + maxRed + " of " + img.getWidth());
        assertTrue(maxRed - minRed > 0.8 * img.getWidth(), "NCCL line spans the page: " + minRed + ".." + maxRed);
        // the chart's rows: below the legend, the first band of rows holding blue (its text)
        int legend = -1;
        int legendEnd = -1;
        for (int y = 0; y < img.getHeight() && (legendEnd < 0 || y - legendEnd < 4); y++) {
            boolean blue = false;
            for (int x = 0; x < img.getWidth() && !blue; x++) {
                blue = near(img.getRGB(x, y) & 0xffffff, 0x1565c0);
            }
            if (blue) {
                legend = legend < 0 ? y : legend;
                legendEnd = y;
            }
        }
        // the logs decided 4 B and 16 KiB (not neighbours among the 25 measured sizes): two dots, no
        // line between them (the sawtooth through NCCL's regret at the sizes between is gone)
        int blue = runs(img, 0x1565c0, legendEnd + 4, img.getHeight() - 1);
        assertEquals(
                2,
                blue,
                "the policy's dots at the 2 decided sizes, below the legend (rows " + legend + ".." + legendEnd + ")");
        // the busbw chart under it, in colours of its own: its rows are those holding NCCL's orange
        // (nothing else on the page is orange); there, best measured's green and the policy's purple
        int[] nccl = extent(img, 0xef6c00, 0, img.getHeight() - 1);
        int top = nccl[2];
        int bottom = nccl[3];
        int[] best = extent(img, 0x2e7d32, top, bottom);
        int dots = runs(img, 0x6a1b9a, top, bottom);
        int redBottom = extent(img, 0xc62828, 0, img.getHeight() - 1)[3];
        System.out.println("ReportHtmlChromiumTest: busbw chart rows " + top + ".." + bottom + ", NCCL x " + nccl[0]
                + ".." + nccl[1] + ", best x " + best[0] + ".." + best[1] + ", " + dots + " policy runs");
        assertTrue(top > redBottom, "the busbw chart is under the regret chart: " + top + " > " + redBottom);
        assertTrue(bottom - top > 250, "the busbw chart is taller than 250 pixels: rows " + top + ".." + bottom);
        assertTrue(
                nccl[1] - nccl[0] > 0.6 * img.getWidth(),
                "NCCL's busbw line spans the page: " + nccl[0] + ".." + nccl[1]);
        assertTrue(
                best[1] - best[0] > 0.6 * img.getWidth(), "best measured spans the page: " + best[0] + ".." + best[1]);
        // the policy's busbw dots at 4 B and 16 KiB (no line between them) and its legend swatch
        assertEquals(3, dots, "the policy's 2 busbw dots and its legend swatch, rows " + top + ".." + bottom);
    }

    /**
     * @return {min x, max x, min y, max y} of the pixels near a colour in rows y0..y1; {MAX_VALUE, -1,
     *     MAX_VALUE, -1} for none
     */
    private static int[] extent(BufferedImage img, int color, int y0, int y1) {
        int[] e = {Integer.MAX_VALUE, -1, Integer.MAX_VALUE, -1};
        for (int y = y0; y <= y1; y++) {
            for (int x = 0; x < img.getWidth(); x++) {
                if (near(img.getRGB(x, y) & 0xffffff, color)) {
                    e[0] = Math.min(e[0], x);
                    e[1] = Math.max(e[1], x);
                    e[2] = Math.min(e[2], y);
                    e[3] = Math.max(e[3], y);
                }
            }
        }
        return e;
    }

    /**
     * compile's page: the busbw chart spans the page (a candidate's line from the left to the right of
     * the 1200-pixel window, the legend beside it), with the policy's red diamonds at its ruled sizes.
     */
    @Test
    void compileChartSpansThePageInChromium() throws Exception {
        Path html = tmp.resolve("compile.html");
        CliRun r = CliRun.run(
                "compile",
                CliRun.fixture("h200-2rank-sweep_allreduce.rep1.csv"),
                "--nccl-log",
                CliRun.trace("nccl_sweep.rank0.log"),
                "--html",
                html.toString(),
                "--summary");
        assertEquals(0, r.exit(), r.err());
        Path png = tmp.resolve("compile.png");
        Path script = Path.of(System.getProperty("nccltj.repo", "..")).resolve("tests/html/check_report.sh");
        Process p = new ProcessBuilder("bash", script.toString(), html.toString(), png.toString())
                .redirectErrorStream(true)
                .start();
        String out = new String(p.getInputStream().readAllBytes());
        assertTrue(p.waitFor(150, TimeUnit.SECONDS), "chromium finished");
        Assumptions.assumeTrue(p.exitValue() != 3, "chromium is not installed");
        assertEquals(0, p.exitValue(), out);
        BufferedImage img = ImageIO.read(png.toFile());
        int min = Integer.MAX_VALUE;
        int max = -1;
        int yMin = Integer.MAX_VALUE;
        int yMax = -1;
        for (int y = 0; y < img.getHeight(); y++) {
            for (int x = 0; x < img.getWidth(); x++) {
                if (near(img.getRGB(x, y) & 0xffffff, 0x1f77b4)) { // the first series (RING/LL128)
                    min = Math.min(min, x);
                    max = Math.max(max, x);
                    yMin = Math.min(yMin, y);
                    yMax = Math.max(yMax, y);
                }
            }
        }
        System.out.println("ReportHtmlChromiumTest: compile chart, RING/LL128 x " + min + ".." + max + ", y " + yMin
                + ".." + yMax + " of " + img.getWidth());
        assertTrue(
                max - min > 0.6 * img.getWidth(),
                "the chart spans the page (the legend beside it): " + min + ".." + max);
        assertTrue(yMax - yMin > 300, "the chart is taller than 300 pixels: " + yMin + ".." + yMax);
        int diamonds = runs(img, 0xd62728, yMin, yMax);
        assertTrue(diamonds >= 12, "the policy's diamonds at its ruled sizes and in the legend: " + diamonds + " runs");
    }

    @Test
    void canaryChartShowsBothArmsAtEverySizeInChromium() throws Exception {
        Path html = tmp.resolve("c.html");
        CliRun r = CliRun.run(CanaryReportCommandTest.args("--html", html.toString()));
        assertEquals(0, r.exit(), r.err());
        Path png = tmp.resolve("c.png");
        Path script = Path.of(System.getProperty("nccltj.repo", "..")).resolve("tests/html/check_report.sh");
        Process p = new ProcessBuilder("bash", script.toString(), html.toString(), png.toString())
                .redirectErrorStream(true)
                .start();
        String out = new String(p.getInputStream().readAllBytes());
        assertTrue(p.waitFor(150, TimeUnit.SECONDS), "chromium finished");
        Assumptions.assumeTrue(p.exitValue() != 3, "chromium is not installed");
        assertEquals(0, p.exitValue(), out);
        BufferedImage img = ImageIO.read(png.toFile());
        // columns holding each arm's colour, as runs of adjacent columns: one per marker, one per legend swatch
        // the chart's rows: from the legend to the lowest marker, where the policy's blue is (nothing else is blue)
        int y0 = Integer.MAX_VALUE;
        int y1 = -1;
        for (int y = 0; y < img.getHeight(); y++) {
            for (int x = 0; x < img.getWidth(); x++) {
                if (near(img.getRGB(x, y) & 0xffffff, 0x1565c0)) {
                    y0 = Math.min(y0, y);
                    y1 = Math.max(y1, y);
                }
            }
        }
        assertTrue(y1 > y0 + 100, "the chart is taller than 100 pixels: rows " + y0 + ".." + y1);
        int red = runs(img, 0xc62828, y0, y1);
        int blue = runs(img, 0x1565c0, y0, y1);
        System.out.println(
                "ReportHtmlChromiumTest: canary chart, " + red + " NCCL and " + blue + " policy marker columns");
        assertTrue(red >= 6 && red <= 8, "NCCL's arm at 5 sizes and in the legend: " + red + " runs");
        assertTrue(blue >= 6 && blue <= 8, "the policy's arm at 5 sizes and in the legend: " + blue + " runs");
    }

    private static int runs(BufferedImage img, int color, int y0, int y1) {
        int runs = 0;
        boolean prev = false;
        for (int x = 0; x < img.getWidth(); x++) {
            boolean any = false;
            for (int y = y0; y <= y1 && !any; y++) {
                any = near(img.getRGB(x, y) & 0xffffff, color);
            }
            if (any && !prev) {
                runs++;
            }
            prev = any;
        }
        return runs;
    }

    private static boolean near(int a, int b) {
        for (int s = 0; s <= 16; s += 8) {
            if (Math.abs(((a >> s) & 0xff) - ((b >> s) & 0xff)) > 24) {
                return false;
            }
        }
        return true;
    }
}
