// ECharts with only the parts the page draws (bars and lines on a grid), so the first load
// stays small.
import * as echarts from 'echarts/core';
import { BarChart, LineChart } from 'echarts/charts';
import { GridComponent, LegendComponent, LegendScrollComponent, TooltipComponent, MarkLineComponent } from 'echarts/components';
import { CanvasRenderer } from 'echarts/renderers';

echarts.use([BarChart, LineChart, GridComponent, LegendComponent, LegendScrollComponent, TooltipComponent, MarkLineComponent,
  CanvasRenderer]);

export type ChartOption = echarts.EChartsCoreOption;

// Draws `option` into a new chart element appended to `parent`; the element's data-series says
// how many series it drew.
export function chart(parent: HTMLElement, option: ChartOption, height = 320): HTMLElement {
  const el = document.createElement('div');
  el.className = 'chart';
  el.style.height = `${height}px`;
  parent.appendChild(el);
  const c = echarts.init(el);
  // On a phone (issue 26 req. 5) a legend of many entries wrapped onto the plot: one scrolling
  // line instead, and the grid sized to its axis labels rather than a desktop margin.
  const narrow = el.clientWidth < 640;
  const o = option as Record<string, unknown>;
  const legend = o.legend as Record<string, unknown> | undefined;
  const grid = o.grid as Record<string, unknown> | undefined;
  c.setOption({
    animation: false,
    ...option,
    ...(narrow && legend ? { legend: { ...legend, type: 'scroll' } } : {}),
    ...(narrow && grid ? { grid: { ...grid, left: 8, right: 16, containLabel: true } } : {}),
  });
  // The series drawn, for the page's tests (the chart itself is a canvas).
  el.dataset.series = String(((c.getOption().series as unknown[]) ?? []).length);
  window.addEventListener('resize', () => c.resize());
  return el;
}
