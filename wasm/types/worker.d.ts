// Types of `weightstream/worker` (wasm/js/worker.mjs): loading to WebGPU in a module Web Worker.
import type { ModelSource, GpuLoadOptions, GpuModel, GpuTensor } from './weightstream.js';

/** What crosses back from the worker: the model without its GPU buffers (they stay in the worker). */
export interface WorkerModel extends Omit<GpuModel, 'tensors' | 'destroy'> {
  /** The load's id: `serveLoads(...).models.get(id)` in the worker is the GpuModel. */
  id: string;
  tensors: Record<string, Omit<GpuTensor, 'buffer' | 'buffers'> & { buffers: number }>;
  /** Destroys the model's buffers in the worker. */
  destroy(): void;
}

/** Options of loadInWorker: loadToWebGPU's, but nothing that is a function crosses (filter: names, a Set or a RegExp; no fetch). */
export type WorkerLoadOptions = Omit<GpuLoadOptions, 'fetch' | 'filter'> & { filter?: string[] | Set<string> | RegExp | string };

/** Main thread: loads `source` in `worker` (which called serveLoads()). Relative URLs are resolved against the page. */
export declare function loadInWorker(worker: Worker, source: ModelSource, options?: WorkerLoadOptions): Promise<WorkerModel>;

/** In the worker, at the top level before any await: answers loadInWorker(). */
export declare function serveLoads(options: {
  device: GPUDevice | (() => GPUDevice | Promise<GPUDevice>);
  /** Where messages come from and go to (default: the worker's global scope). */
  scope?: { postMessage(message: unknown): void; addEventListener(type: 'message', listener: (ev: MessageEvent) => void): void };
  onLoaded?: (model: GpuModel, id: string) => void;
}): { models: Map<string, GpuModel> };
