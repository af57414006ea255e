// Native.cs: running a model through libnnn's plan API (runtime/include/nnn/run.h)
// by P/Invoke, for platforms that load native libraries. Only libnnn's public
// C API is declared here; what a model contains is libnnn's business, so
// nothing here names a layer or a field.
using System;
using System.Collections.Generic;
using System.IO;
using System.Runtime.InteropServices;
using System.Text;

namespace Nnn
{
    /// <summary>How Conv layers compute (run.h's nnn_run_opts_t.compat, compat.h's flags).</summary>
    public enum ConvCompat
    {
        /// <summary>The format's convolution (the default).</summary>
        Spec = 0,
        /// <summary>The original Neural Network Notions framework's arithmetic, for files trained
        /// there (NNN_COMPAT_CONV_ORIGINAL; docs/original-framework.md).</summary>
        Original = 1,
    }

    /// <summary>libnnn's C API as P/Invoke declarations, and the helpers that turn its
    /// statuses and diagnostics into <see cref="NnnException"/>.</summary>
    public static class Native
    {
        /// <summary>The native library every declaration below binds to: the one place that
        /// names it. Mono and .NET map "nnn" to libnnn.so (Linux, Android), libnnn.dylib (macOS)
        /// or nnn.dll (Windows), searched as the platform searches (LD_LIBRARY_PATH...).
        /// On targets that link native code statically (Unity's iOS and WebGL: no dlopen),
        /// it must read "__Internal" instead, the name Mono and IL2CPP use for the program's
        /// own symbols: change it here (one edit, e.g. under <c>#if UNITY_IOS || UNITY_WEBGL</c>).
        /// Without editing, Mono's <c>&lt;dllmap dll="nnn" target="..."/&gt;</c> in the
        /// assembly's .config, or .NET Core's <c>NativeLibrary.SetDllImportResolver</c>, can map
        /// the name to another file at load time. Note that the kernels are plugins libnnn
        /// loads with dlopen (plugins/builtin.so): a statically linked target has none today,
        /// so there models are read, validated and written (the generated codec), not run.</summary>
        public const string Library = "nnn";

        /// <summary>Samples per plan run when many are run (run.h's NNN_RUN_BATCH), as
        /// <c>nnnkit run</c> does by default.</summary>
        public const int RunBatch = 256;

        /// <summary>The most dimensions a shape has (types.h's NNN_MAX_RANK).</summary>
        public const int MaxRank = 32;

        // ---- the C structs, member for member (tests/csharp/native_layout.c checks sizes and offsets) ----

        internal const int PathMax = 192, MsgMax = 384; // status_codes.h's NNN_PATH_MAX, NNN_MSG_MAX

        /// <summary>status.h's nnn_diag_t.</summary>
        [StructLayout(LayoutKind.Sequential)]
        internal struct Diag
        {
            public int code;
            public ulong offset;
            [MarshalAs(UnmanagedType.ByValArray, SizeConst = PathMax)]
            public byte[] path;
            [MarshalAs(UnmanagedType.ByValArray, SizeConst = MsgMax)]
            public byte[] msg;
            public uint line, column;
        }

        /// <summary>status.h's nnn_diags_t; zeroed is initialised.</summary>
        [StructLayout(LayoutKind.Sequential)]
        internal struct Diags
        {
            public IntPtr v;
            public UIntPtr n, cap, limit, dropped;
        }

        /// <summary>types.h's nnn_shape_t.</summary>
        [StructLayout(LayoutKind.Sequential)]
        internal struct Shape
        {
            public int rank;
            [MarshalAs(UnmanagedType.ByValArray, SizeConst = MaxRank)]
            public long[] dims;
        }

        /// <summary>run.h's nnn_run_opts_t.</summary>
        [StructLayout(LayoutKind.Sequential)]
        internal struct RunOpts
        {
            public uint size;
            public int threads;
            public ulong max_tensor_bytes;
            public uint compat;
        }

        /// <summary>model.h's nnn_decode_opts_t.</summary>
        [StructLayout(LayoutKind.Sequential)]
        internal struct DecodeOpts
        {
            public uint flags;
            public IntPtr visit;
            public IntPtr ctx;
        }

        /// <summary>context.h's nnn_discover_opts_t (a byte for C's bool keeps it blittable).</summary>
        [StructLayout(LayoutKind.Sequential)]
        internal struct DiscoverOpts
        {
            public UIntPtr size;
            public IntPtr files;
            public int nfiles;
            public byte search;
            public IntPtr installed_dir;
            public IntPtr scanner;
            public int timeout_ms;
            public IntPtr cache;
        }

        internal const uint DecodeCopy = 1; // model.h's NNN_DECODE_COPY
        internal const ulong NoOffset = ulong.MaxValue; // status_codes.h's NNN_NO_OFFSET

        // ---- the functions (strings go as NUL-terminated UTF-8 bytes on every platform) ----

        const CallingConvention C = CallingConvention.Cdecl;

        [DllImport(Library, CallingConvention = C)] internal static extern IntPtr nnn_version();
        [DllImport(Library, CallingConvention = C)] internal static extern IntPtr nnn_status_str(int s);
        [DllImport(Library, CallingConvention = C)] internal static extern void nnn_diags_free(ref Diags d);
        [DllImport(Library, CallingConvention = C)] internal static extern int nnn_ctx_new(out IntPtr ctx, ref Diags d);
        [DllImport(Library, CallingConvention = C)] internal static extern void nnn_ctx_free(IntPtr ctx);
        [DllImport(Library, CallingConvention = C)]
        internal static extern int nnn_plugin_discover(Handle ctx, ref DiscoverOpts o, ref Diags d);
        [DllImport(Library, CallingConvention = C)]
        internal static extern int nnn_file_open(byte[] path, ref DecodeOpts o, out IntPtr file, ref Diags d);
        [DllImport(Library, CallingConvention = C)] internal static extern IntPtr nnn_file_model(Handle file);
        [DllImport(Library, CallingConvention = C)] internal static extern void nnn_file_close(IntPtr file);
        [DllImport(Library, CallingConvention = C)]
        internal static extern int nnn_model_decode(byte[] buf, UIntPtr len, ref DecodeOpts o, out IntPtr model,
                                                    ref Diags d);
        [DllImport(Library, CallingConvention = C)] internal static extern void nnn_model_free(IntPtr model);
        [DllImport(Library, CallingConvention = C)]
        internal static extern int nnn_plan_new(Handle ctx, IntPtr model, ref Shape input, ref RunOpts o,
                                                out IntPtr plan, ref Diags d);
        [DllImport(Library, CallingConvention = C)] internal static extern IntPtr nnn_plan_shape(Handle plan, int i);
        [DllImport(Library, CallingConvention = C)] internal static extern long nnn_shape_numel(ref Shape s);
        [DllImport(Library, CallingConvention = C)]
        internal static extern int nnn_plan_run(Handle plan, [In] float[] x, [Out] float[] y, ref Diags d);
        [DllImport(Library, CallingConvention = C)] internal static extern void nnn_plan_free(IntPtr plan);

        /// <summary>libnnn's version ("0.1.0").</summary>
        public static string Version => FromUtf8(nnn_version());

        /// <summary>Throws the problem a failed call reported (<paramref name="status"/> not OK),
        /// and frees <paramref name="d"/> in every case.</summary>
        internal static void Check(int status, ref Diags d)
        {
            try
            {
                if (status != 0)
                    throw new NnnException(FirstProblem(status, ref d));
            }
            finally
            {
                nnn_diags_free(ref d);
            }
        }

        /// <summary>The problem behind <paramref name="status"/>: the first of that code (libnnn
        /// returns the first problem's code), else the first, else the code's own description.</summary>
        static Problem FirstProblem(int status, ref Diags d)
        {
            int size = Marshal.SizeOf(typeof(Diag));
            long n = (long)d.n.ToUInt64();
            Diag? first = null;
            for (long i = 0; i < n; i++)
            {
                var diag = (Diag)Marshal.PtrToStructure(new IntPtr(d.v.ToInt64() + i * size), typeof(Diag));
                if (first == null)
                    first = diag;
                if (diag.code == status)
                {
                    first = diag;
                    break;
                }
            }
            if (first == null)
                return new Problem((Status)status, "", -1, FromUtf8(nnn_status_str(status)));
            Diag f = first.Value;
            return new Problem((Status)f.code, FromUtf8(f.path), f.offset == NoOffset ? -1 : (long)f.offset,
                               FromUtf8(f.msg));
        }

        /// <summary>A NUL-terminated UTF-8 copy of <paramref name="s"/>.</summary>
        internal static byte[] ToUtf8(string s)
        {
            if (s.IndexOf('\0') >= 0)
                throw new ArgumentException("a path or name holds a NUL character: " + s);
            return Encoding.UTF8.GetBytes(s + "\0");
        }

        static string FromUtf8(byte[] b)
        {
            int n = Array.IndexOf(b, (byte)0);
            return Encoding.UTF8.GetString(b, 0, n < 0 ? b.Length : n);
        }

        static string FromUtf8(IntPtr p)
        {
            if (p == IntPtr.Zero)
                return "";
            int n = 0;
            while (Marshal.ReadByte(p, n) != 0)
                n++;
            var b = new byte[n];
            Marshal.Copy(p, b, 0, n);
            return Encoding.UTF8.GetString(b);
        }

        /// <summary>A <see cref="Shape"/> of <paramref name="dims"/>, checked as libnnn needs it.</summary>
        internal static Shape ToShape(long[] dims, string what)
        {
            if (dims == null || dims.Length < 1 || dims.Length > MaxRank)
                throw new ArgumentException(what + " must have 1 to " + MaxRank + " dimensions");
            var s = new Shape { rank = dims.Length, dims = new long[MaxRank] };
            for (int i = 0; i < dims.Length; i++)
            {
                if (dims[i] < 0)
                    throw new ArgumentException(what + "[" + i + "] is " + dims[i] + ": dimensions are >= 0");
                s.dims[i] = dims[i];
            }
            return s;
        }

        internal static long[] FromShape(Shape s)
        {
            var dims = new long[s.rank];
            Array.Copy(s.dims, dims, s.rank);
            return dims;
        }

        /// <summary>The folder of the builtin kernels, found beside libnnn as nnnkit finds it
        /// beside itself: <c>nnnkit/plugins</c> (an installed PREFIX/lib) or <c>plugins</c> (the
        /// build tree) in the library's folder; null when libnnn's file cannot be named (then
        /// only NNN_PLUGIN_PATH's folders are searched). Found anew for each model opened: no
        /// state is kept between calls (one read of the process' map of files).</summary>
        public static string PluginFolder => FindPluginFolder();

        /// <summary>P/Invoke does not say which file it loaded: the process' map of mapped files
        /// does (Linux and Android; elsewhere there is none and this gives null).</summary>
        static string FindPluginFolder()
        {
            const string Maps = "/proc/self/maps";
            GC.KeepAlive(Version); // loads libnnn, so that it is in the map
            if (!File.Exists(Maps))
                return null;
            foreach (string line in File.ReadAllLines(Maps))
            {
                int slash = line.IndexOf('/');
                if (slash < 0)
                    continue;
                string file = line.Substring(slash);
                string name = Path.GetFileName(file);
                if (name != "libnnn.so" && !name.StartsWith("libnnn.so.", StringComparison.Ordinal))
                    continue;
                string dir = Path.GetDirectoryName(file);
                foreach (string sub in new[] { Path.Combine(dir, "nnnkit", "plugins"), Path.Combine(dir, "plugins") })
                    if (Directory.Exists(sub))
                        return sub;
                return null;
            }
            return null;
        }

        /// <summary>What a native object is, for its free function.</summary>
        internal enum Kind { Context, File, Model, Plan }

        /// <summary>An owned native object, freed once by its own function, after everything
        /// that borrows it: a handle made with a parent (the context of a model, the model
        /// of a plan) holds a reference to it until it is freed itself, so the finalizer's
        /// order cannot free a context under its model or a model under its plan.</summary>
        internal sealed class Handle : SafeHandle
        {
            readonly Kind kind;
            readonly Handle parent;

            /// <summary>Owns <paramref name="h"/> (not null), borrowing <paramref name="parent"/>.</summary>
            internal Handle(IntPtr h, Kind kind, Handle parent) : base(IntPtr.Zero, true)
            {
                this.kind = kind;
                if (parent != null)
                {
                    bool added = false;
                    parent.DangerousAddRef(ref added);
                    this.parent = parent;
                }
                SetHandle(h);
            }

            public override bool IsInvalid => handle == IntPtr.Zero;

            /// <summary>The pointer, for a struct member (P/Invoke keeps a handle argument
            /// alive by itself; a member needs the handle kept alive over the call).</summary>
            internal IntPtr Pointer => handle;

            protected override bool ReleaseHandle()
            {
                switch (kind)
                {
                    case Kind.Context: nnn_ctx_free(handle); break;
                    case Kind.File: nnn_file_close(handle); break;
                    case Kind.Model: nnn_model_free(handle); break;
                    case Kind.Plan: nnn_plan_free(handle); break;
                }
                if (parent != null)
                    parent.DangerousRelease();
                return true;
            }
        }
    }

    /// <summary>A model opened by libnnn, with the plugins that run it: the builtin kernels
    /// (<see cref="Native.PluginFolder"/>), NNN_PLUGIN_PATH's, and any plugin files given.
    /// Dispose it (its plans keep what they need until they are disposed too).</summary>
    public sealed class NativeModel : IDisposable
    {
        readonly Native.Handle ctx;
        readonly Native.Handle owner; // the file (mapped) or the model (decoded from bytes)
        readonly IntPtr model;        // borrowed from owner
        bool disposed;

        NativeModel(Native.Handle ctx, Native.Handle owner, IntPtr model)
        {
            this.ctx = ctx;
            this.owner = owner;
            this.model = model;
        }

        /// <summary>Opens the .nnn file at <paramref name="path"/> (mapped, not copied).
        /// Throws <see cref="NnnException"/> with libnnn's code, field path, byte offset and
        /// message when it does not decode, or when a plugin fails to load.</summary>
        /// <param name="path">the model file</param>
        /// <param name="plugins">plugin files to load before the others (nnnkit's --plugin)</param>
        public static NativeModel Open(string path, params string[] plugins)
        {
            if (path == null)
                throw new ArgumentNullException(nameof(path));
            Native.Handle ctx = NewContext(plugins);
            try
            {
                var o = new Native.DecodeOpts { ctx = ctx.Pointer };
                var d = new Native.Diags();
                int st = Native.nnn_file_open(Native.ToUtf8(path), ref o, out IntPtr f, ref d);
                Native.Check(st, ref d);
                var file = new Native.Handle(f, Native.Kind.File, ctx);
                return new NativeModel(ctx, file, Native.nnn_file_model(file));
            }
            catch
            {
                ctx.Dispose();
                throw;
            }
        }

        /// <summary>Decodes a model from .nnn bytes, copied into memory the model owns.
        /// Throws <see cref="NnnException"/> as <see cref="Open"/> does.</summary>
        /// <param name="bytes">the model's bytes</param>
        /// <param name="plugins">plugin files to load before the others (nnnkit's --plugin)</param>
        public static NativeModel FromBytes(byte[] bytes, params string[] plugins)
        {
            if (bytes == null)
                throw new ArgumentNullException(nameof(bytes));
            Native.Handle ctx = NewContext(plugins);
            try
            {
                var o = new Native.DecodeOpts { flags = Native.DecodeCopy, ctx = ctx.Pointer };
                var d = new Native.Diags();
                int st = Native.nnn_model_decode(bytes, new UIntPtr((ulong)bytes.Length), ref o, out IntPtr m, ref d);
                Native.Check(st, ref d);
                var owner = new Native.Handle(m, Native.Kind.Model, ctx);
                return new NativeModel(ctx, owner, m);
            }
            catch
            {
                ctx.Dispose();
                throw;
            }
        }

        /// <summary>A context with the plugins nnnkit would load: the files given, then
        /// NNN_PLUGIN_PATH's folders, then the builtin folder (each scanned in a child first).</summary>
        static Native.Handle NewContext(string[] plugins)
        {
            var d = new Native.Diags();
            int st = Native.nnn_ctx_new(out IntPtr p, ref d);
            Native.Check(st, ref d);
            var ctx = new Native.Handle(p, Native.Kind.Context, null);
            var strings = new List<IntPtr>();
            IntPtr files = IntPtr.Zero;
            try
            {
                plugins = plugins ?? new string[0];
                files = Marshal.AllocHGlobal(IntPtr.Size * Math.Max(1, plugins.Length));
                for (int i = 0; i < plugins.Length; i++)
                {
                    strings.Add(CString(Path.GetFullPath(plugins[i])));
                    Marshal.WriteIntPtr(files, i * IntPtr.Size, strings[i]);
                }
                string folder = Native.PluginFolder;
                if (folder != null)
                    strings.Add(CString(Path.GetFullPath(folder)));
                var o = new Native.DiscoverOpts
                {
                    size = new UIntPtr((uint)Marshal.SizeOf(typeof(Native.DiscoverOpts))),
                    files = files,
                    nfiles = plugins.Length,
                    search = 1,
                    installed_dir = folder != null ? strings[strings.Count - 1] : IntPtr.Zero,
                };
                d = new Native.Diags();
                st = Native.nnn_plugin_discover(ctx, ref o, ref d);
                Native.Check(st, ref d);
                return ctx;
            }
            catch
            {
                ctx.Dispose();
                throw;
            }
            finally
            {
                foreach (IntPtr s in strings)
                    Marshal.FreeHGlobal(s);
                if (files != IntPtr.Zero)
                    Marshal.FreeHGlobal(files);
            }
        }

        static IntPtr CString(string s)
        {
            byte[] b = Native.ToUtf8(s);
            IntPtr p = Marshal.AllocHGlobal(b.Length);
            Marshal.Copy(b, 0, p, b.Length);
            return p;
        }

        /// <summary>Plans the model for inputs of <paramref name="inputShape"/> (batch axis
        /// first): the model is validated for that shape and every kernel prepared once.
        /// Throws <see cref="NnnException"/> naming the layer when the shape does not fit.</summary>
        /// <param name="inputShape">the input's shape, batch first (1 to 32 dims)</param>
        /// <param name="threads">threads the kernels may use, this one included (nnnkit run --threads)</param>
        /// <param name="convCompat">how Conv layers compute (nnnkit run --conv-compat)</param>
        /// <param name="maxTensorBytes">the largest intermediate tensor allowed; 0: libnnn's default (4 GiB)</param>
        public NativePlan Plan(long[] inputShape, int threads = 1, ConvCompat convCompat = ConvCompat.Spec,
                               long maxTensorBytes = 0)
        {
            if (threads < 1)
                throw new ArgumentOutOfRangeException(nameof(threads), threads, "at least 1");
            if (maxTensorBytes < 0)
                throw new ArgumentOutOfRangeException(nameof(maxTensorBytes), maxTensorBytes, "0 (the default) or more");
            var shape = Native.ToShape(inputShape, nameof(inputShape));
            var o = new Native.RunOpts
            {
                size = (uint)Marshal.SizeOf(typeof(Native.RunOpts)),
                threads = threads,
                max_tensor_bytes = (ulong)maxTensorBytes,
                compat = (uint)convCompat,
            };
            if (disposed)
                throw new ObjectDisposedException(nameof(NativeModel));
            var d = new Native.Diags();
            int st = Native.nnn_plan_new(ctx, model, ref shape, ref o, out IntPtr p, ref d);
            GC.KeepAlive(owner); // model points into it
            Native.Check(st, ref d);
            return new NativePlan(new Native.Handle(p, Native.Kind.Plan, owner));
        }

        /// <summary>Runs the model on every sample of <paramref name="input"/> (shape
        /// <paramref name="inputShape"/>, samples first, C order) in batches of
        /// <paramref name="batch"/> samples, as <c>nnnkit run</c> does: one plan for the full
        /// batches, one for the short last one. Returns the outputs, samples first.</summary>
        /// <param name="input">the samples, C order</param>
        /// <param name="inputShape">their shape: samples first</param>
        /// <param name="outputShape">the outputs' shape, samples first</param>
        /// <param name="batch">samples per plan run (nnnkit run --batch)</param>
        /// <param name="threads">as for <see cref="Plan"/></param>
        /// <param name="convCompat">as for <see cref="Plan"/></param>
        public float[] Run(float[] input, long[] inputShape, out long[] outputShape, int batch = Native.RunBatch,
                           int threads = 1, ConvCompat convCompat = ConvCompat.Spec)
        {
            if (input == null)
                throw new ArgumentNullException(nameof(input));
            if (batch < 1)
                throw new ArgumentOutOfRangeException(nameof(batch), batch, "at least 1");
            Native.ToShape(inputShape, nameof(inputShape));
            long total = inputShape[0];
            long[] shape = (long[])inputShape.Clone();
            // An empty input still gets its output's shape (planned for one sample).
            shape[0] = Math.Max(1, Math.Min(total, batch));
            float[] output = null;
            outputShape = null;
            long per = 0, outPer = 0, done = 0;
            while (done < total || output == null)
            {
                using (NativePlan p = Plan(shape, threads, convCompat))
                {
                    if (output == null)
                    {
                        if (p.OutputShape[0] != shape[0])
                            throw new ArgumentException("the model's output's first axis is " + p.OutputShape[0] +
                                                        ", not the batch (" + shape[0] + ")");
                        per = Numel(p.InputShape) / shape[0];
                        outPer = Numel(p.OutputShape) / shape[0];
                        if (input.LongLength != total * per)
                            throw new ArgumentException("input holds " + input.LongLength + " floats; shape " +
                                                        string.Join("x", inputShape) + " takes " + total * per);
                        outputShape = (long[])p.OutputShape.Clone();
                        outputShape[0] = total;
                        output = new float[checked(total * outPer)];
                    }
                    var x = new float[shape[0] * per];
                    for (; done + shape[0] <= total; done += shape[0])
                    {
                        Array.Copy(input, done * per, x, 0, x.LongLength);
                        float[] y = p.Run(x);
                        Array.Copy(y, 0, output, done * outPer, y.LongLength);
                    }
                }
                shape[0] = total - done; // the short last batch, if any
            }
            return output;
        }

        static long Numel(long[] dims)
        {
            long n = 1;
            foreach (long d in dims)
                n = checked(n * d);
            return n;
        }

        /// <summary>Closes the model; plans made from it stay usable until disposed (each holds
        /// the model and its context: the last to go frees them).</summary>
        public void Dispose()
        {
            disposed = true;
            owner.Dispose();
            ctx.Dispose();
        }
    }

    /// <summary>A model planned for one input shape (<see cref="NativeModel.Plan"/>):
    /// running it only computes. One run at a time per plan.</summary>
    public sealed class NativePlan : IDisposable
    {
        readonly Native.Handle plan;
        readonly long inputCount, outputCount;

        /// <summary>The shape of the inputs <see cref="Run(float[])"/> takes, batch first.</summary>
        public long[] InputShape { get; }
        /// <summary>The shape of the outputs it gives, batch first.</summary>
        public long[] OutputShape { get; }

        internal NativePlan(Native.Handle plan)
        {
            this.plan = plan;
            Native.Shape input = ShapeAt(-1);
            // The output is the last layer's: nnn_plan_shape gives null past it (run.c).
            // A model without layers has none: its output is its input (-1), as libnnn runs it.
            int last = -1;
            while (Native.nnn_plan_shape(plan, last + 1) != IntPtr.Zero)
                last++;
            Native.Shape output = ShapeAt(last);
            inputCount = Native.nnn_shape_numel(ref input);
            outputCount = Native.nnn_shape_numel(ref output);
            InputShape = Native.FromShape(input);
            OutputShape = Native.FromShape(output);
            if (inputCount < 0 || outputCount < 0 || inputCount > int.MaxValue || outputCount > int.MaxValue)
            {
                plan.Dispose();
                throw new ArgumentException("the plan's input or output (" + inputCount + ", " + outputCount +
                                            " floats) does not fit in a C# array");
            }
        }

        Native.Shape ShapeAt(int i)
        {
            return (Native.Shape)Marshal.PtrToStructure(Native.nnn_plan_shape(plan, i), typeof(Native.Shape));
        }

        /// <summary>Runs the plan on <paramref name="input"/> (the input shape's element count,
        /// C order) and returns the outputs.</summary>
        public float[] Run(float[] input)
        {
            var output = new float[outputCount];
            Run(input, output);
            return output;
        }

        /// <summary>Runs the plan on <paramref name="input"/> into <paramref name="output"/>
        /// (the output shape's element count). Throws <see cref="NnnException"/> when a kernel fails.</summary>
        public void Run(float[] input, float[] output)
        {
            if (input == null || input.LongLength != inputCount)
                throw new ArgumentException("input must hold " + inputCount + " floats (shape " +
                                            string.Join("x", InputShape) + ")", nameof(input));
            if (output == null || output.LongLength != outputCount)
                throw new ArgumentException("output must hold " + outputCount + " floats (shape " +
                                            string.Join("x", OutputShape) + ")", nameof(output));
            var d = new Native.Diags();
            int st = Native.nnn_plan_run(plan, input, output, ref d);
            Native.Check(st, ref d);
        }

        /// <summary>Frees the plan (its buffers and threads).</summary>
        public void Dispose()
        {
            plan.Dispose();
        }
    }
}
