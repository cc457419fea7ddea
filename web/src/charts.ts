// ECharts with only the parts the page draws (bars and lines on a grid), so the first load
// stays small.
import * as echarts from 'echarts/core';
import { BarChart, LineChart } from 'echarts/charts';
import { GridComponent, LegendComponent, TooltipComponent, MarkLineComponent } from 'echarts/components';
import { CanvasRenderer } from 'echarts/renderers';

echarts.use([BarChart, LineChart, GridComponent, LegendComponent, TooltipComponent, MarkLineComponent, CanvasRenderer]);

export type ChartOption = echarts.EChartsCoreOption;

// Draws `option` into a new chart element appended to `parent`; the element's data-series says
// how many series it drew.
export function chart(parent: HTMLElement, option: ChartOption, height = 320): HTMLElement {
  const el = document.createElement('div');
  el.className = 'chart';
  el.style.height = `${height}px`;
  parent.appendChild(el);
  const c = echarts.init(el);
  c.setOption({ animation: false, ...option });
  // The series drawn, for the page's tests (the chart itself is a canvas).
  el.dataset.series = String(((c.getOption().series as unknown[]) ?? []).length);
  window.addEventListener('resize', () => c.resize());
  return el;
}
