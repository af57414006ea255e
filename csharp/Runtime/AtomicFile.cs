// AtomicFile.cs: the one way the C# runtime writes a file, as libnnn's
// nnn_write_atomic does (runtime/file/write.c): a temporary file beside the
// target, written, flushed to disk and renamed over it, so a crash leaves
// the old file or the whole new one; the temporary is removed on every
// failure. Only a regular file (or a new name) is replaced: a folder, a
// device or a symbolic link is refused (the base class library cannot
// follow a link to write through it, as libnnn does).
using System;
using System.IO;

namespace Nnn
{
    /// <summary>Atomic file writes.</summary>
    public static class AtomicFile
    {
        /// <summary>Replaces <paramref name="path"/> with what <paramref name="write"/> writes to
        /// a stream, atomically; throws <see cref="NnnException"/> (E_IO) when it cannot, leaving
        /// the target as it was and no temporary file behind.</summary>
        public static void Write(string path, Action<Stream> write)
        {
            if (string.IsNullOrEmpty(path))
                throw new NnnException(Status.E_USAGE, "no file name to write");
            string full = Path.GetFullPath(path);
            Refuse(path, full);
            string tmp = null;
            try
            {
                FileStream s = CreateTemporary(full, out tmp);
                using (s)
                {
                    write(s);
                    s.Flush(true);
                }
                if (File.Exists(full))
                    File.Replace(tmp, full, null);
                else
                    File.Move(tmp, full);
                tmp = null;
            }
            catch (Exception e) when (e is IOException || e is UnauthorizedAccessException ||
                                      e is NotSupportedException)
            {
                throw new NnnException(Status.E_IO, "cannot write " + path + ": " + e.Message);
            }
            finally
            {
                if (tmp != null)
                    TryDelete(tmp);
            }
        }

        // Anything but a regular file or a new name is never replaced.
        static void Refuse(string path, string full)
        {
            if (Directory.Exists(full))
                throw new NnnException(Status.E_IO, "cannot write " + path + ": it is a folder");
            if (!File.Exists(full))
                return;
            FileAttributes a = File.GetAttributes(full);
            if ((a & FileAttributes.ReparsePoint) != 0)
                throw new NnnException(Status.E_IO, "cannot write " + path +
                    ": it is a symbolic link; write to the file it names");
            if ((a & FileAttributes.Device) != 0)
                throw new NnnException(Status.E_IO, "cannot write " + path + ": it is a device, not a regular file");
        }

        // A new file TARGET.tmp.XXXXXX beside the target (never an existing one).
        static FileStream CreateTemporary(string full, out string tmp)
        {
            for (int attempt = 0; ; attempt++)
            {
                // A random name per call: no shared generator (no global state, no lock).
                tmp = full + ".tmp." + Guid.NewGuid().ToString("N").Substring(0, 12);
                try
                {
                    return new FileStream(tmp, FileMode.CreateNew, FileAccess.Write, FileShare.None);
                }
                catch (IOException) when (attempt < 100 && File.Exists(tmp))
                {
                    // taken by another writer: another name
                }
                catch
                {
                    tmp = null; // never created: nothing to remove
                    throw;
                }
            }
        }

        static void TryDelete(string tmp)
        {
            try
            {
                File.Delete(tmp);
            }
            catch (IOException)
            {
            }
            catch (UnauthorizedAccessException)
            {
            }
        }
    }
}
